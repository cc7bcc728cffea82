/**
 * Resuming a turn that a dead box cut (a SIGKILLed or crashed process, or, in a cluster, a worker
 * whose lease another worker took over). The box that finds the turn without its `turn-ended`:
 *
 * 1. gives each call left without a result its result (turn-closer.ts's `repairOf`: a send whose
 *    ledger entry committed its success, any other call "interrupted: check its effect");
 * 2. starts the turn's counters after what the ledger holds (`t<N>s<k>`, `t<N>c<k>`, `t<N>a<k>`,
 *    `t<N>n<k>` are never given twice) and rebuilds the never-twice map from the turn's sends;
 * 3. tells the model in a hidden note that the turn was cut and goes on (`TURN_RESUMED_NOTE`), and
 *    what the user answered meanwhile on the turn's approval cards (`resumeNoteOf`);
 * 4. runs the steps the turn has left.
 *
 * A turn that was cut `MAX_TURN_RESUMES` times already (counted from its notes in the transcript, so
 * every box counts the same) is closed with a notice instead: a turn that kills its box each time
 * must not take every box down in turn.
 */
import { hiddenPrompt } from '@sendbox/protocol';
import type { JsonObject } from '@sendbox/txcript';
import { deliveredKey } from '../tools/send-message/index.ts';
import { answersToCutTurn } from '../approvals/inbox-answer.ts';
import type { StoredMessage } from '@sendbox/protocol';

/** How many times a cut turn is resumed; the next cut closes it with a notice. */
export const MAX_TURN_RESUMES = 2;

/** What the model reads where its turn was cut (a hidden prompt: the host's words, not the user's). */
export const TURN_RESUMED_NOTE = hiddenPrompt(
  '[event]\nThis turn was cut: the box running it stopped, and another box (or the same one after a ' +
    'restart) goes on with it from here. A tool call that was running when it stopped has an ' +
    '"interrupted" result: check its effect before you run it again. Messages you sent before the ' +
    'cut reached the user; do not send them again. Go on with the turn.',
);

/**
 * What the model reads where its cut turn goes on: TURN_RESUMED_NOTE, then what the user answered
 * on the turn's approval cards while no call waited on them (approvals/inbox-answer.ts); those
 * answers' inputs (`taken`, nonces) are the turn's, so no turn of their own tells the model again.
 */
export function resumeNoteOf(
  turn: number,
  rows: ReadonlyArray<{ id: string }>,
): { texts: string[]; taken: string[] } {
  const answers = answersToCutTurn(turn, rows);
  return {
    texts: [TURN_RESUMED_NOTE, ...answers.map((answer) => answer.text)],
    taken: answers.map((answer) => answer.nonce),
  };
}

/** Where a cut turn stands, read from its ledger entries and transcript records. */
export interface ResumePoint {
  /** The next index of each per-turn id: assistant `a`, send `s`, tool call `c`, notice `n`. */
  counters: { assistant: number; send: number; tool: number; notice: number };
  /** The never-twice map: each delivered send's `deliveredKey` → its id. */
  delivered: Map<string, string>;
  /** How many sends the turn delivered before the cut. */
  sent: number;
  /** Model steps the turn took before the cut (a step of several calls counts as several). */
  steps: number;
  /** How many times the turn was resumed before. */
  resumes: number;
}

/** A ledger row as the resume reads it. */
export interface ResumeRow {
  id: string;
  kind: string;
  message?: unknown;
}

export function resumePointOf(
  turn: number,
  records: readonly JsonObject[],
  rows: readonly ResumeRow[],
): ResumePoint {
  const counters = { assistant: 0, send: 0, tool: 0, notice: 0 };
  const letters = { a: 'assistant', s: 'send', c: 'tool', n: 'notice' } as const;
  const pattern = new RegExp(`^t${turn}([ascn])(\\d+)$`);
  const delivered = new Map<string, string>();
  let sent = 0;
  for (const row of rows) {
    const match = pattern.exec(row.id);
    if (!match) continue;
    const counter = letters[match[1] as keyof typeof letters];
    counters[counter] = Math.max(counters[counter], Number(match[2]) + 1);
    if (row.kind !== 'send-message') continue;
    sent += 1;
    if (row.message !== undefined) delivered.set(deliveredKey(row.message as StoredMessage), row.id);
  }
  // The turn's records: those after its user record `[t<N>u]`.
  const tag = `[t${turn}u]`;
  const start = records.findLastIndex(
    (record) => record.role === 'user' && firstText(record)?.startsWith(tag),
  );
  let steps = 0;
  let resumes = 0;
  let previous: unknown = 'user';
  for (const record of start < 0 ? [] : records.slice(start + 1)) {
    if (record.role === 'assistant' && previous !== 'assistant') steps += 1;
    if (record.role === 'user' && firstText(record) === TURN_RESUMED_NOTE) resumes += 1;
    previous = record.role;
  }
  return { counters, delivered, sent, steps, resumes };
}

function firstText(record: JsonObject): string | undefined {
  const message = record.message;
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const content = message.content;
  if (!Array.isArray(content)) return undefined;
  for (const block of content) {
    if (typeof block === 'object' && block !== null && !Array.isArray(block) && block.type === 'text')
      return typeof block.text === 'string' ? block.text : undefined;
  }
  return undefined;
}
