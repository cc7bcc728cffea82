/**
 * A prompt sent again in place of an earlier one (regenerate the last reply, or edit the last
 * prompt and resend). The ledger and the JSONL stay append-only: the new turn's user `message`
 * entry names the one it replaces in `supersedes`, and its JSONL user record carries a hidden
 * prompt saying the same (`[SAND_HIDDEN_PROMPT][supersedes t3u]`, §4's marker with a bracketed
 * label, so every reader already folds it as host text). Everything from the superseded prompt up
 * to the new one is withdrawn: the UI does not show it and the model does not read it; the files
 * keep it, as Grok Bot keeps an abandoned branch (`branched`, §7).
 */
import { hiddenPrompt } from './answers.ts';

/** The JSONL text block that marks a user record as replacing the turn of `userId` (`t<n>u`). */
export function supersedesMarker(userId: string): string {
  return hiddenPrompt(`[supersedes ${userId}]`);
}

const MARKER = /^\s*\[SAND_HIDDEN_PROMPT\]\[supersedes (t[0-9a-z]+u)\]\s*$/;

/** The user message id a JSONL text block says its record replaces; undefined for any other text. */
export function supersededBy(text: string): string | undefined {
  return MARKER.exec(text)?.[1];
}

/** What `withdrawnIds` needs of an entry (any reader's entry type has it). */
export interface RevisableEntry {
  id: string;
  kind: string;
  supersedes?: unknown;
}

/**
 * The ids of the entries a later prompt withdrew: for each user message that `supersedes` an
 * earlier one, every entry from that one up to (not including) itself, in ledger order. A
 * `supersedes` naming no earlier entry withdraws nothing.
 */
export function withdrawnIds(entries: readonly RevisableEntry[]): Set<string> {
  const withdrawn = new Set<string>();
  const at = new Map<string, number>();
  entries.forEach((entry, i) => {
    if (!at.has(entry.id)) at.set(entry.id, i);
    if (entry.kind !== 'message' || typeof entry.supersedes !== 'string') return;
    const from = at.get(entry.supersedes);
    if (from === undefined || from >= i) return;
    for (let j = from; j < i; j++) withdrawn.add(entries[j]!.id);
  });
  return withdrawn;
}
