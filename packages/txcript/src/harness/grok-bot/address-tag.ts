/**
 * The address tag that opens a user record's text (sendbox decision C6):
 * what the codec strips from a message and a list title from its text.
 */

// C6: `[t` + base-36 turn (+ optional letter, already inside [0-9a-z]+) + `]`, then one separator.
const ADDRESS_TAG = /^\[t[0-9a-z]+\](?:\r\n|\n| )?/;

/** Remove a leading `[tNu]`-style address tag and one following newline or space (C6). */
export function stripAddressTag(text: string): string {
  if (!text.startsWith('[t')) return text;
  const m = ADDRESS_TAG.exec(text);
  return m === null ? text : text.slice(m[0].length);
}
