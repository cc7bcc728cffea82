/**
 * The profile's limits on an agent's background work and on a turn's cost
 * (`profile.json` → `background`, a sendbox key; Grok Bot's profiles carry no
 * such key that we know of, and readers keep unknown keys).
 */
import { z } from 'zod';
import { DEFAULT_TASK_LIMITS, type TaskLimits } from './agent-tasks.ts';

export const backgroundSettingsSchema = z.looseObject({
  /** Background commands running at once (default 4). */
  maxCommands: z.number().int().min(0).max(64).optional(),
  /** Wall-clock limit of a background command, ms (default 1 h). */
  maxRuntimeMs: z.number().int().positive().optional(),
  /** Subagents running at once (default 2). */
  maxSubagents: z.number().int().min(0).max(16).optional(),
  /** Model steps of one subagent (default 25). */
  subagentMaxSteps: z.number().int().positive().optional(),
  /** How deep subagents may nest: 1, children start none (default). */
  maxDepth: z.number().int().min(1).max(4).optional(),
  /** Model steps of one turn, its subagents' included (default: the box's per-turn step cap). */
  maxStepsPerTurn: z.number().int().positive().optional(),
});

export type BackgroundSettings = z.output<typeof backgroundSettingsSchema>;

export const DEFAULT_SUBAGENT_MAX_STEPS = 25;

export interface BackgroundLimits extends TaskLimits {
  subagentMaxSteps: number;
  maxDepth: number;
  /** null: the box's per-turn cap alone. */
  maxStepsPerTurn: number | null;
}

export function backgroundLimits(settings: BackgroundSettings | undefined): BackgroundLimits {
  return {
    maxCommands: settings?.maxCommands ?? DEFAULT_TASK_LIMITS.maxCommands,
    maxRuntimeMs: settings?.maxRuntimeMs ?? DEFAULT_TASK_LIMITS.maxRuntimeMs,
    maxChildren: settings?.maxSubagents ?? DEFAULT_TASK_LIMITS.maxChildren,
    subagentMaxSteps: settings?.subagentMaxSteps ?? DEFAULT_SUBAGENT_MAX_STEPS,
    maxDepth: settings?.maxDepth ?? 1,
    maxStepsPerTurn: settings?.maxStepsPerTurn ?? null,
  };
}
