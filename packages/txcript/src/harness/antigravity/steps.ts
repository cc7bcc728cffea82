/**
 * Antigravity's trajectory steps (docs/formats/antigravity.md): the step
 * kinds and statuses, and what one step's protobuf payload says, read by
 * field number. A `steps` row's `step_payload` is a `gemini_coder.Step`:
 * its kind (1), status (4), the step's metadata envelope (5: time, the tool
 * call a tool step answers, model and usage) and one payload message whose
 * field number depends on the kind (user input 19, planner response 20, …).
 */
import type { Block, ImageSource, JsonValue, StopReason, Usage } from '../../model/common.ts';
import {
  type PbField,
  pbAllBytes,
  pbFields,
  pbMessage,
  pbRead,
  pbString,
  pbTimestamp,
  pbUint,
} from '../protobuf.ts';
import type { StepRow } from './records.ts';
import { antigravityToolToCommon } from './tools.ts';

export const STEP = {
  CODE_ACTION: 5,
  GREP_SEARCH: 7,
  VIEW_FILE: 8,
  LIST_DIRECTORY: 9,
  USER_INPUT: 14,
  PLANNER_RESPONSE: 15,
  RUN_COMMAND: 21,
  CHECKPOINT: 23,
  MCP_TOOL: 38,
  EPHEMERAL_MESSAGE: 90,
  CONVERSATION_HISTORY: 98,
  SYSTEM_MESSAGE: 101,
  GENERIC: 132,
} as const;

export const STATUS = { PENDING: 1, DONE: 3, CANCELED: 6, ERROR: 7 } as const;

/** The field of `gemini_coder.Step` holding each kind's payload. */
export const PAYLOAD_FIELD: Readonly<Record<number, number>> = {
  [STEP.CODE_ACTION]: 10,
  [STEP.GREP_SEARCH]: 13,
  [STEP.VIEW_FILE]: 14,
  [STEP.LIST_DIRECTORY]: 15,
  [STEP.USER_INPUT]: 19,
  [STEP.PLANNER_RESPONSE]: 20,
  [STEP.RUN_COMMAND]: 28,
  [STEP.CHECKPOINT]: 30,
  [STEP.MCP_TOOL]: 47,
  [STEP.EPHEMERAL_MESSAGE]: 103,
  [STEP.CONVERSATION_HISTORY]: 111,
  [STEP.SYSTEM_MESSAGE]: 114,
  [STEP.GENERIC]: 140,
};

/** Bookkeeping steps: summaries, context markers, injected notices. None is a message. */
const BOOKKEEPING = new Set<number>([
  STEP.CHECKPOINT,
  STEP.CONVERSATION_HISTORY,
  STEP.SYSTEM_MESSAGE,
  STEP.EPHEMERAL_MESSAGE,
]);

/** The `exa.codeium_common_pb.StopReason` values with a canonical meaning. */
const STOP_IN: Readonly<Record<number, StopReason>> = {
  2: 'end_turn',
  3: 'max_tokens',
  10: 'tool_use',
  13: 'error',
  16: 'aborted',
};

export function stopReasonOut(r: StopReason): number | undefined {
  if (typeof r === 'object') {
    const m = /^stop-(\d+)$/.exec(r.other);
    return m === null ? undefined : Number(m[1]);
  }
  if (r === 'stop_sequence') return 2;
  for (const [n, v] of Object.entries(STOP_IN)) if (v === r) return Number(n);
  return undefined;
}

/** A numeric model id as a name (Antigravity's model enum is not published). */
export const modelName = (n: number): string => `model-${n}`;
export const modelNumber = (name: string | undefined): number | undefined => {
  const m = name === undefined ? null : /^model-(\d+)$/.exec(name);
  return m === null ? undefined : Number(m[1]);
};

export function stripFileUri(uri: string): string {
  return uri.startsWith('file://') ? uri.slice('file://'.length) : uri;
}

/** One step, read. */
export type StepReading =
  | { kind: 'user'; content: Block[] }
  | { kind: 'assistant'; content: Block[]; model?: string; stop_reason?: StopReason; usage?: Usage }
  | { kind: 'result'; block: Extract<Block, { type: 'tool_result' }> }
  /** Bookkeeping, a call still running, or an empty step: not a message. */
  | { kind: 'none' };

export interface StepRead {
  reading: StepReading;
  /** The step's time (its metadata's), when it has one. */
  at?: string;
  /** Set when the payload is damaged or lacks what its kind needs: what is wrong. */
  problem?: string;
}

export interface StepEnvelope {
  payload: PbField[];
  meta: PbField[];
  whole: boolean;
}

export function envelope(step: StepRow): StepEnvelope {
  const { fields, whole } = pbRead(step.step_payload);
  return { payload: fields, meta: pbMessage(fields, 5), whole };
}

export const nonBlank = (s: string | undefined): string | undefined =>
  s !== undefined && s.trim() !== '' ? s : undefined;

/** `CortexStepUserInput`: the user's text (2; else its items' texts 3.1; else the query 1) and images (5). */
function userContent(input: PbField[]): Block[] {
  const out: Block[] = [];
  const items = pbAllBytes(input, 3).flatMap((b) => nonBlank(pbString(pbFields(b), 1)) ?? []);
  const response = nonBlank(pbString(input, 2));
  // The items are the text in pieces when they join to it: one block each.
  const texts =
    response !== undefined && items.join('\n\n') !== response
      ? [response]
      : items.length > 0
        ? items
        : [nonBlank(pbString(input, 1)) ?? []].flat();
  for (const text of texts) out.push({ type: 'text', text });
  for (const image of pbAllBytes(input, 5)) {
    const f = pbFields(image);
    const data = pbString(f, 1);
    if (data === undefined) continue;
    const source: ImageSource = { type: 'base64', media_type: pbString(f, 2) ?? 'image/png', data };
    out.push({ type: 'image', source });
  }
  return out;
}

/** `CortexStepPlannerResponse`: thinking (3, its signature 4), the reply (1) and the tool calls (7). */
function plannerReading(planner: PbField[], meta: PbField[]): StepReading {
  const content: Block[] = [];
  const thinking = nonBlank(pbString(planner, 3));
  if (thinking !== undefined) {
    const signature = nonBlank(pbString(planner, 4));
    content.push({ type: 'thinking', text: thinking, ...(signature !== undefined ? { signature } : {}) });
  }
  const text = nonBlank(pbString(planner, 1));
  if (text !== undefined) content.push({ type: 'text', text });
  for (const bytes of pbAllBytes(planner, 7)) {
    // `ChatToolCall {1: id, 2: name, 3: arguments as JSON}`
    const call = pbFields(bytes);
    const id = pbString(call, 1);
    const name = pbString(call, 2);
    if (id === undefined || name === undefined) continue;
    content.push({ type: 'tool_use', id, tool: antigravityToolToCommon(name, parseArgs(pbString(call, 3))) });
  }
  if (content.length === 0) return { kind: 'none' };
  const stats = pbMessage(meta, 9);
  const input = pbUint(stats, 2) ?? 0;
  const output = pbUint(stats, 3) ?? 0;
  const cacheWrite = pbUint(stats, 4) ?? 0;
  const cacheRead = pbUint(stats, 5) ?? 0;
  const model = pbUint(meta, 11);
  const stop = pbUint(planner, 12);
  return {
    kind: 'assistant',
    content,
    ...(model !== undefined ? { model: modelName(model) } : {}),
    ...(stop !== undefined ? { stop_reason: STOP_IN[stop] ?? { other: `stop-${stop}` } } : {}),
    ...(input > 0 || output > 0
      ? {
          usage: {
            input_tokens: input,
            output_tokens: output,
            ...(cacheRead > 0 ? { cache_read_input_tokens: cacheRead } : {}),
            ...(cacheWrite > 0 ? { cache_creation_input_tokens: cacheWrite } : {}),
          },
        }
      : {}),
  };
}

function parseArgs(text: string | undefined): JsonValue {
  if (text === undefined || text === '') return {};
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** Result text that is a JSON object or array (as txcript writes structured results) reads back as JSON. */
function resultValue(text: string): JsonValue {
  const t = text.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return text;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** `CortexErrorDetails`: the model-facing message (9), else the user-facing one (1), else the short one (2). */
function errorText(details: Uint8Array): string | undefined {
  if (details.length === 0) return undefined;
  const f = pbFields(details);
  return nonBlank(pbString(f, 9)) ?? nonBlank(pbString(f, 1)) ?? nonBlank(pbString(f, 2));
}

/** A tool step's result, by kind, and whether the tool itself says it failed. */
function toolOutput(stepType: number, body: PbField[]): { content: JsonValue; failed: boolean } {
  switch (stepType) {
    case STEP.VIEW_FILE: // content (4), else raw content (9)
      return { content: pbString(body, 4) ?? pbString(body, 9) ?? '', failed: false };
    case STEP.RUN_COMMAND: {
      // combined output (21.1), else stdout (4); a nonzero exit code (6) fails
      const text = pbString(pbMessage(body, 21), 1) ?? pbString(body, 4) ?? '';
      return { content: text, failed: (pbUint(body, 6) ?? 0) !== 0 };
    }
    case STEP.LIST_DIRECTORY: {
      const entries = pbAllBytes(body, 3).flatMap((bytes): JsonValue[] => {
        const e = pbFields(bytes);
        const name = pbString(e, 1);
        if (name === undefined) return [];
        const size = pbUint(e, 4);
        return [
          {
            name,
            ...(pbUint(e, 2) === 1 ? { is_dir: true } : {}),
            ...(size !== undefined ? { size_bytes: size } : {}),
          },
        ];
      });
      return { content: { path: stripFileUri(pbString(body, 1) ?? ''), entries }, failed: false };
    }
    case STEP.GREP_SEARCH: {
      const error = nonBlank(pbString(body, 5));
      return error !== undefined
        ? { content: error, failed: true }
        : { content: pbString(body, 3) ?? '', failed: false };
    }
    case STEP.CODE_ACTION: {
      // The result is derived: which file was created (spec 1.2) or edited.
      const spec = pbMessage(body, 1);
      const created = pbMessage(spec, 2);
      const uri =
        pbString(pbMessage(pbMessage(body, 2), 1), 8) ??
        pbString(pbMessage(created, 2), 5) ??
        pbString(pbMessage(pbMessage(spec, 1), 4), 5) ??
        '';
      return {
        content: { file: stripFileUri(uri), [created.length > 0 ? 'created' : 'edited']: true },
        failed: false,
      };
    }
    case STEP.MCP_TOOL:
      return { content: pbString(body, 3) ?? '', failed: false };
    case STEP.GENERIC:
      return { content: resultValue(pbString(pbMessage(body, 2), 1) ?? ''), failed: false };
    default:
      // A tool step of a kind not modelled here: its call is kept, with an empty result.
      return { content: '', failed: false };
  }
}

const FINISHED = new Set<number>([STATUS.DONE, STATUS.ERROR, STATUS.CANCELED]);

/** What one step says. */
export function readStep(step: StepRow): StepRead {
  const { payload, meta, whole } = envelope(step);
  const at = pbTimestamp(pbMessage(meta, 1));
  const timed = at !== undefined ? { at } : {};
  if (!whole)
    return { reading: { kind: 'none' }, ...timed, problem: 'its step_payload is cut short or damaged' };
  const field = PAYLOAD_FIELD[step.step_type];
  const body = field === undefined ? [] : pbMessage(payload, field);
  if (step.step_type === STEP.USER_INPUT) {
    if (field === undefined || body.length === 0)
      return {
        reading: { kind: 'none' },
        ...timed,
        problem: 'a user input step without its input (field 19)',
      };
    const content = userContent(body);
    return { reading: content.length > 0 ? { kind: 'user', content } : { kind: 'none' }, ...timed };
  }
  if (step.step_type === STEP.PLANNER_RESPONSE) return { reading: plannerReading(body, meta), ...timed };
  if (BOOKKEEPING.has(step.step_type)) return { reading: { kind: 'none' }, ...timed };
  // Any other step whose metadata carries a tool call (4) is that call's result, once it has finished.
  const id = pbString(pbMessage(meta, 4), 1);
  if (id === undefined || !FINISHED.has(step.status)) return { reading: { kind: 'none' }, ...timed };
  const { content, failed } = toolOutput(step.step_type, body);
  const error = errorText(step.error_details);
  const isError = step.status !== STATUS.DONE || error !== undefined || failed;
  return {
    reading: {
      kind: 'result',
      block: {
        type: 'tool_result',
        tool_use_id: id,
        content: error ?? content,
        ...(isError ? { is_error: true } : {}),
      },
    },
    ...timed,
  };
}

/** The title a checkpoint step gives (10, else 4), when it is one. */
export function checkpointTitle(step: StepRow): string | undefined {
  if (step.step_type !== STEP.CHECKPOINT) return undefined;
  const checkpoint = pbMessage(envelope(step).payload, PAYLOAD_FIELD[STEP.CHECKPOINT]!);
  return nonBlank(pbString(checkpoint, 10)) ?? nonBlank(pbString(checkpoint, 4));
}
