/**
 * Claude Code's local-command envelopes: the user driving the CLI itself (a
 * slash command, what it printed, the fixed caveat before its output),
 * written as tag markup filling a message body. Older CLIs put them on `user`
 * lines, newer ones on `system` lines with `subtype: "local_command"`
 * (public txcript format notes). Only a body made entirely of envelope tags
 * counts; a message that quotes the tags inside prose is ordinary text.
 *
 * The markup has no quoting, so a payload holding `</local-command-stdout>`
 * would end its section early on re-read. Written payloads therefore get one
 * more backslash before the slash of every envelope close tag
 * (`</tag>` -> `<\/tag>`, `<\/tag>` -> `<\\/tag>`) and read ones one less: a
 * pair of inverse maps, so any payload comes back as it was.
 */

export type LocalCommandEnvelope =
  { kind: 'command'; command: string; args?: string } | { kind: 'stdout'; text: string } | { kind: 'caveat' };

const COMMAND_TAGS = new Set(['command-name', 'command-message', 'command-args']);
const ENVELOPE_TAGS = [...COMMAND_TAGS, 'local-command-stdout', 'local-command-caveat'];

/** `<tag>body</tag>` sections filling `text` (white space between them allowed), or undefined. */
function sections(text: string): { tag: string; body: string }[] | undefined {
  const out: { tag: string; body: string }[] = [];
  let rest = text.trim();
  while (rest !== '') {
    const open = /^<([a-z-]+)>/.exec(rest);
    if (open === null) return undefined;
    const tag = open[1]!;
    const close = `</${tag}>`;
    const end = rest.indexOf(close, open[0].length);
    if (end === -1) return undefined;
    out.push({ tag, body: rest.slice(open[0].length, end) });
    rest = rest.slice(end + close.length).trimStart();
  }
  return out.length > 0 ? out : undefined;
}

// CSI and OSC sequences, and lone two-character escapes: what terminals colour and title with.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

export function stripAnsi(text: string): string {
  return text.includes('\u001b') ? text.replace(ANSI, '') : text;
}

const CLOSE_RUN = new RegExp(`<(\\\\*)/(${ENVELOPE_TAGS.join('|')})>`, 'g');

export function escapeEnvelopeText(text: string): string {
  return text.replace(CLOSE_RUN, (_m, slashes: string, tag: string) => `<${slashes}\\/${tag}>`);
}

export function unescapeEnvelopeText(text: string): string {
  return text.replace(CLOSE_RUN, (_m, slashes: string, tag: string) => `<${slashes.slice(1)}/${tag}>`);
}

/** The envelope a body is, or undefined when it is ordinary text. */
export function parseLocalCommand(text: string): LocalCommandEnvelope | undefined {
  if (!text.trimStart().startsWith('<')) return undefined;
  const found = sections(text);
  if (found === undefined) return undefined;
  const name = found.find((s) => s.tag === 'command-name');
  if (name !== undefined) {
    if (!found.every((s) => COMMAND_TAGS.has(s.tag))) return undefined;
    const bare = unescapeEnvelopeText(name.body.trim());
    if (bare === '') return undefined;
    const args = found.find((s) => s.tag === 'command-args')?.body.trim();
    return {
      kind: 'command',
      command: bare.startsWith('/') ? bare : `/${bare}`,
      ...(args !== undefined && args !== '' ? { args: unescapeEnvelopeText(args) } : {}),
    };
  }
  if (found.length !== 1) return undefined;
  const only = found[0]!;
  if (only.tag === 'local-command-stdout')
    return { kind: 'stdout', text: stripAnsi(unescapeEnvelopeText(only.body)) };
  if (only.tag === 'local-command-caveat') return { kind: 'caveat' };
  return undefined;
}

/** The user-line body Claude Code writes for a slash command. */
export function commandBody(command: string, args: string | undefined): string {
  const name = escapeEnvelopeText(command);
  const message = escapeEnvelopeText(command.replace(/^\//, ''));
  const parts = [`<command-name>${name}</command-name>`, `<command-message>${message}</command-message>`];
  if (args !== undefined) parts.push(`<command-args>${escapeEnvelopeText(args)}</command-args>`);
  return parts.join('\n');
}

/** The `system` line body for a command's output. */
export function stdoutBody(text: string): string {
  return `<local-command-stdout>${escapeEnvelopeText(text)}</local-command-stdout>`;
}
