/**
 * `update_state`'s input: exactly one of `routine`, `memory` or `profile` (issue 21 item 1), and
 * what each room that owns that state gives the tool to apply it (`StateHandler`). The tool knows
 * no room: routines/ hands it the routine handler, memory/ the memory one, the profile its own,
 * each through the call's ToolContext.
 */
import { z } from 'zod';

export const routineCommand = z
  .strictObject({
    action: z
      .enum(['create', 'update', 'pause', 'resume', 'delete'])
      .describe('create a routine; update, pause, resume or delete one by its id'),
    id: z.string().min(1).optional().describe('The routine to change (every action but create).'),
    name: z.string().min(1).max(120).optional().describe('A short name, shown to the user and in the run.'),
    schedule: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A 5-field cron expression ("0 9 * * 1-5": 09:00 on weekdays; "CRON_TZ=Europe/Paris 0 9 * * *" names ' +
          'the zone) or "@every <duration>" ("@every 2h", "@every 90m"). The shortest interval is one minute.',
      ),
    timezone: z
      .string()
      .min(1)
      .optional()
      .describe('An IANA time zone for the cron fields ("America/New_York"); default: the box\'s zone.'),
    prompt: z.string().min(1).optional().describe('What you are told to do at each run.'),
    silent: z
      .boolean()
      .optional()
      .describe('true: a run may end without a message to the user (nothing worth saying); default false.'),
  })
  .superRefine((input, ctx) => {
    if (input.action === 'create') {
      if (input.id !== undefined)
        ctx.addIssue({ code: 'custom', path: ['id'], message: 'create makes a new id: leave id out' });
      for (const key of ['name', 'schedule', 'prompt'] as const) {
        if (input[key] === undefined)
          ctx.addIssue({ code: 'custom', path: [key], message: `create needs ${key}` });
      }
      return;
    }
    if (input.id === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['id'],
        message: `${input.action} needs the routine's id (the id create answered with)`,
      });
    if (input.action !== 'update') {
      for (const key of ['name', 'schedule', 'timezone', 'prompt', 'silent'] as const) {
        if (input[key] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `${input.action} takes only the id; change ${key} with action "update"`,
          });
      }
    }
  });

export const memoryCommand = z.strictObject({
  action: z.enum(['write', 'forget']).describe('write a memory, or forget one by its exact text'),
  text: z.string().min(1).describe('What to remember, or the exact text of the memory to forget.'),
  scope: z
    .enum(['agent', 'user'])
    .optional()
    .describe('agent (default): this agent only; user: every agent of this user.'),
});

export const profileCommand = z
  .strictObject({
    name: z.string().min(1).max(120).optional(),
    description: z.string().max(400).optional(),
    instructions: z.string().optional().describe('Standing instructions added to your system prompt.'),
  })
  .refine((input) => Object.keys(input).length > 0, {
    message: 'give at least one of name, description, instructions',
  });

const PARTS = ['routine', 'memory', 'profile'] as const;

export const updateStateInput = z
  .strictObject({
    routine: routineCommand.optional().describe('A scheduled run of yours: create, change or remove one.'),
    memory: memoryCommand.optional().describe('Something to remember across conversations, or to forget.'),
    profile: profileCommand.optional().describe('Your own name, description or instructions.'),
  })
  .superRefine((input, ctx) => {
    const given = PARTS.filter((part) => input[part] !== undefined);
    if (given.length !== 1)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message:
          given.length === 0
            ? 'give exactly one of routine, memory or profile'
            : `give exactly one of routine, memory or profile, not ${given.join(' and ')}: make one call each`,
      });
  });

export type UpdateStateInput = z.output<typeof updateStateInput>;
export type RoutineCommand = z.output<typeof routineCommand>;
export type MemoryCommand = z.output<typeof memoryCommand>;
export type ProfileCommand = z.output<typeof profileCommand>;
export type StatePart = (typeof PARTS)[number];

/**
 * What a room gives `update_state` for its part: `apply` changes the state and answers the model in
 * a sentence; a `StateError` it throws is the model's to fix (its message says what and how).
 */
export interface StateHandler<I> {
  apply(input: I): Promise<StateAnswer>;
}

export interface StateAnswer {
  /** What the model reads (and the JSONL's `success.currentStep`). */
  text: string;
  /** Who or what it changed, for the ledger's one-line summary (a routine's name). */
  target?: string;
}

/** A refusal the model can act on (a bad schedule, an unknown id); any other error is the box's. */
export class StateError extends Error {}
