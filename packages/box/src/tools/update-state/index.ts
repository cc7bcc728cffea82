/**
 * `update_state`: one tool for an agent's own state (issue 21 item 1). Its input names exactly one
 * part (`routine`, `memory`, `profile`); the part's handler comes from the room that owns it,
 * through the call's ToolContext (routines/ gives `routines`; memory/ `memory`; the profile
 * `profile`). A part whose room is not in this box gets an error the model can read.
 *
 * On disk it is what Grok Bot writes for its own host tools: a `communicate_update` call whose
 * `currentStep` is `{"__sand_tool__":true,"tool":"update_state","detail":<part>,"target":…,"args":…}`
 * and whose result is `success{currentStep: <answer>}` or `error{error}` (communicate-update.ts).
 */
import type { JsonObject } from '@sendbox/txcript';
import { COMMUNICATE_UPDATE, encodeSandStep } from '../communicate-update.ts';
import {
  defineTool,
  errorOutcome,
  oneLine,
  successFields,
  type ToolContext,
  type ToolOutcome,
} from '../types.ts';
import {
  StateError,
  updateStateInput,
  type StateHandler,
  type StatePart,
  type UpdateStateInput,
} from './schema.ts';

export { StateError, type StateAnswer, type StateHandler } from './schema.ts';
export type { MemoryCommand, ProfileCommand, RoutineCommand } from './schema.ts';

const DESCRIPTION = [
  'Change your own lasting state. Give exactly one of:',
  '- routine: runs of yours on a schedule. At each run you get its prompt as a hidden message and work as in any',
  '  turn; send the user what they should see. create (name, schedule, prompt, optional timezone and silent),',
  '  then update, pause, resume or delete it by the id create answered with.',
  '- memory: what you should remember in every conversation (write), or stop remembering (forget, exact text).',
  '- profile: your own name, description or standing instructions.',
].join('\n');

/** Which ToolContext key carries each part's handler. */
const HANDLER_KEY = { routine: 'routines', memory: 'memory', profile: 'profile' } as const satisfies Record<
  StatePart,
  keyof ToolContext
>;

const UNAVAILABLE: Record<StatePart, string> = {
  routine: 'Routines are not available in this box, so nothing was scheduled.',
  memory: 'Memory is not available in this box yet, so nothing was remembered or forgotten.',
  profile: 'Changing your profile is not available in this box yet, so your profile is unchanged.',
};

function partOf(input: UpdateStateInput): StatePart {
  if (input.routine) return 'routine';
  if (input.memory) return 'memory';
  return 'profile';
}

/** What the call acts on, for the record's `target` (a routine's name or id, a memory's scope). */
function targetOf(args: JsonObject): string | undefined {
  const routine = args.routine;
  if (typeof routine === 'object' && routine !== null && !Array.isArray(routine)) {
    const named = routine.name ?? routine.id;
    return typeof named === 'string' ? named : undefined;
  }
  const memory = args.memory;
  if (typeof memory === 'object' && memory !== null && !Array.isArray(memory))
    return typeof memory.scope === 'string' ? memory.scope : 'agent';
  return undefined;
}

export const updateStateTool = defineTool({
  name: 'update_state',
  description: DESCRIPTION,
  input: updateStateInput,
  recordedName: COMMUNICATE_UPDATE,
  wrapRecorded(input) {
    const { toolCallId, ...args } = input;
    const detail = (['routine', 'memory', 'profile'] as const).find((part) => part in args);
    const target = targetOf(args);
    const currentStep = encodeSandStep({
      tool: 'update_state',
      ...(detail ? { detail } : {}),
      ...(target ? { target } : {}),
      args,
    });
    const recorded: JsonObject = { currentStep };
    if (toolCallId !== undefined) recorded.toolCallId = toolCallId;
    return recorded;
  },
  async run(input, ctx): Promise<ToolOutcome> {
    const part = partOf(input);
    const handler: StateHandler<unknown> | undefined = ctx[HANDLER_KEY[part]];
    if (!handler) return errorOutcome(UNAVAILABLE[part], `${part}: not available`);
    try {
      const answer = await handler.apply(input[part]);
      const summary = `${part}${answer.target ? ` ${answer.target}` : ''}: ${answer.text}`;
      return { envelope: { success: { currentStep: answer.text } }, summary: oneLine(summary) };
    } catch (error) {
      if (error instanceof StateError) return errorOutcome(error.message, `${part}: ${error.message}`);
      throw error;
    }
  },
  modelOutput(result) {
    const step = successFields(result)?.currentStep;
    return typeof step === 'string' ? { type: 'text', value: step } : undefined;
  },
});
