/**
 * A subagent's steps read back from its transcript, in the ledger-entry shapes its live run
 * streamed (`thinking`, `tool-call`), for a UI that opens the child's row after the run (the
 * child has no store.db: child-ledger.ts). Tool calls pair with the next result of the same
 * name (C3); a call without a result (a crash cut it) shows as an error.
 */
import type { LedgerEntry } from '@sendbox/protocol';
import type { JsonObject } from '@sendbox/txcript';
import { toolCallDetails } from '../agent/tool-details.ts';
import type { Scrubber } from '../secrets/scrub.ts';
import { oneLine, statusOf, type ToolEnvelope } from '../tools/types.ts';

type Step = LedgerEntry & { seq: number };

export function childSteps(records: readonly JsonObject[], scrubber: Scrubber): Step[] {
  const out: Step[] = [];
  const open: Array<{ at: number; name: string; input: Record<string, unknown> }> = [];
  let k = 0;
  const push = (entry: LedgerEntry) => out.push({ ...entry, seq: out.length + 1 });
  for (const record of records) {
    for (const block of blocksOf(record)) {
      if (block.type === 'text' && record.role === 'assistant' && typeof block.text === 'string') {
        push({ id: `c${k++}`, kind: 'thinking', text: scrubber.text(block.text), timestampMs: 0 });
      } else if (block.type === 'tool_use' && typeof block.name === 'string') {
        const input = isObject(block.input) ? block.input : {};
        open.push({ at: out.length, name: block.name, input });
        push({
          id: `c${k++}`,
          kind: 'tool-call',
          name: block.name,
          status: 'running',
          summary: oneLine(scrubber.text(inputLine(input))),
          timestampMs: 0,
        });
      } else if (block.type === 'tool_result' && typeof block.name === 'string') {
        const i = open.findIndex((call) => call.name === block.name);
        if (i < 0) continue;
        const [call] = open.splice(i, 1);
        const entry = out[call!.at]!;
        const status = isObject(block.result) ? statusOf(block.result as ToolEnvelope) : 'error';
        const { durationMs: _none, ...details } = toolCallDetails(call!.input, block.result, 0, scrubber);
        out[call!.at] = { ...entry, ...details, status };
      }
    }
  }
  for (const call of open) out[call.at] = { ...out[call.at]!, status: 'error' };
  return out;
}

/** The line a live row shows for a call, from its input (what the tool's own summary starts with). */
function inputLine(input: Record<string, unknown>): string {
  for (const key of ['command', 'path', 'description', 'taskId']) {
    if (typeof input[key] === 'string') return input[key];
  }
  return '';
}

function blocksOf(record: JsonObject): Array<Record<string, unknown>> {
  const message = record.message;
  if (!isObject(message) || !Array.isArray(message.content)) return [];
  return (message.content as unknown[]).filter(isObject);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
