/**
 * Antigravity CLI records <-> Common (docs/formats/antigravity.md).
 *
 * The conversation is the `steps` rows in `idx` order (steps.ts reads each):
 * a user input step is a user message, a planner response step an assistant
 * message (thinking, text, tool calls), and a finished tool step the result
 * of the call its metadata names. Bookkeeping steps are no message. The
 * session's facts come from `trajectory_meta`, the `main` row of
 * `trajectory_metadata_blob` (working folder, branch, start) and the steps
 * (the newest checkpoint's title, else the first prompt; the newest model).
 *
 * Writing is trajectory.ts. Reading needs no zod: a listing reads sessions
 * through `conversationOf` with the store alone.
 */
import type { Message, Meta, Transcript } from '../../model/common.ts';
import { titleFromText } from '../common-values.ts';
import { pbFields, pbMessage, pbString, pbTimestamp } from '../protobuf.ts';
import type { WarningCodec, WarningContext } from '../types.ts';
import {
  type AntigravityDb,
  type AntigravityRecords,
  antigravityDb,
  antigravityDocument,
} from './records.ts';
import { checkpointTitle, nonBlank, readStep, stripFileUri } from './steps.ts';
import { trajectoryRows } from './trajectory.ts';

const UNIX_EPOCH = '1970-01-01T00:00:00.000Z';

/** A conversation's rows as Common; damaged steps are skipped with a warning naming them. */
export function conversationOf(db: AntigravityDb, ctx: WarningContext): Transcript {
  const source = ctx.source ?? ctx.sessionId;
  const main = pbFields(db.trajectory_metadata_blob.find((r) => r.id === 'main')?.data ?? new Uint8Array(0));
  const workspace = pbMessage(main, 1);
  const steps = [...db.steps].sort((a, b) => a.idx - b.idx);

  const messages: Message[] = [];
  const untimed: number[] = [];
  let title: string | undefined;
  let model: string | undefined;
  let firstAt: string | undefined;
  for (const step of steps) {
    const { reading, at, problem } = readStep(step);
    firstAt ??= at;
    if (problem !== undefined) {
      ctx.onWarning?.({
        source,
        message: `step ${step.idx} (kind ${step.step_type}) skipped: ${problem}. Antigravity may have been writing it; view the session again once the CLI is done`,
      });
      continue;
    }
    title = checkpointTitle(step) ?? title;
    let message: Message | undefined;
    if (reading.kind === 'user') message = { role: 'user', content: reading.content, timestamp: '' };
    else if (reading.kind === 'result') message = { role: 'user', content: [reading.block], timestamp: '' };
    else if (reading.kind === 'assistant') {
      const { kind: _, ...rest } = reading;
      model = rest.model ?? model;
      message = { role: 'assistant', timestamp: '', ...rest };
    }
    if (message === undefined) continue;
    if (at === undefined) untimed.push(messages.length);
    message.timestamp = at ?? '';
    messages.push(message);
  }

  const start = pbTimestamp(pbMessage(main, 2)) ?? firstAt ?? ctx.timestamp ?? UNIX_EPOCH;
  let last = start;
  for (const m of messages) {
    if (m.timestamp === '') m.timestamp = last;
    else last = m.timestamp;
  }
  for (const i of untimed) ctx.untimed?.add(i);

  if (title === undefined) {
    const first = messages.find((m) => m.role === 'user' && m.content[0]?.type === 'text')?.content[0];
    if (first?.type === 'text') title = titleFromText(first.text);
  }
  const cwdUri = nonBlank(pbString(workspace, 1)) ?? nonBlank(pbString(main, 7));
  const branch = nonBlank(pbString(workspace, 4));
  const meta: Meta = {
    id: nonBlank(db.trajectory_meta[0]?.cascade_id) ?? nonBlank(pbString(main, 6)) ?? ctx.sessionId,
    timestamp: start,
    ...(cwdUri !== undefined ? { cwd: stripFileUri(cwdUri) } : {}),
    ...(branch !== undefined ? { git_branch: branch } : {}),
    ...(title !== undefined ? { title } : {}),
    ...(model !== undefined ? { model } : {}),
  };
  return { meta, messages };
}

export const antigravityCodec: WarningCodec<AntigravityRecords> = {
  toCommon(records, ctx) {
    const source = ctx.source ?? ctx.sessionId;
    return conversationOf(antigravityDb(records, source).db, ctx);
  },
  fromCommon(transcript) {
    return antigravityDocument(trajectoryRows(transcript));
  },
};
