/**
 * The crash harness's invariants (docs/runtime.md, "Invariants" 5, 6 and 8) on one agent's ledger
 * entries and transcript records, wherever they were read from (store.db and the JSONL, PostgreSQL
 * rows, an export read back by txcript). Returns what breaks them; empty when they hold. Tests only.
 */
import type { JsonObject } from '@sendbox/txcript';

export interface InvariantEntry {
  id: string;
  kind: string;
}

export function crashInvariantBreaks(
  entries: readonly InvariantEntry[],
  records: readonly JsonObject[],
): string[] {
  const breaks: string[] = [];
  const ids = new Set(entries.map((entry) => entry.id));
  const ledgerUsers = entries.filter((entry) => /^t\d+u$/.test(entry.id)).map((entry) => entry.id);
  const jsonlUsers: string[] = [];
  const open: string[] = [];
  const jsonlSends: string[] = [];
  for (const record of records) {
    const content = (record.message as { content?: unknown } | undefined)?.content;
    const blocks = Array.isArray(content) ? (content as JsonObject[]) : [];
    const first = blocks[0];
    if (record.role === 'user' && typeof first?.text === 'string') {
      const tag = /^\[(t\d+u)\]/.exec(first.text);
      if (tag) jsonlUsers.push(tag[1]!);
    }
    for (const block of blocks) {
      const name = typeof block.name === 'string' ? block.name : '?';
      if (block.type === 'tool_use') open.push(name);
      if (block.type !== 'tool_result') continue;
      const at = open.indexOf(name);
      if (at < 0) breaks.push(`a ${name} result without a call`);
      else open.splice(at, 1);
      const success = (block.result as { success?: { messageId?: unknown } } | undefined)?.success;
      if (typeof success?.messageId === 'string') jsonlSends.push(success.messageId);
    }
  }
  if (jsonlUsers.join() !== ledgerUsers.join())
    breaks.push(`user turns: ledger ${ledgerUsers.join(' ')}, transcript ${jsonlUsers.join(' ')}`);
  for (const user of ledgerUsers) if (!ids.has(user.replace(/u$/, 'e'))) breaks.push(`${user} never ended`);
  if (open.length > 0) breaks.push(`calls without a result: ${open.join(' ')}`);
  const ledgerSends = entries.filter((entry) => entry.kind === 'send-message').map((entry) => entry.id);
  if (jsonlSends.join() !== ledgerSends.join())
    breaks.push(`delivered sends: ledger ${ledgerSends.join(' ')}, transcript ${jsonlSends.join(' ')}`);
  return breaks;
}
