/**
 * Compaction as each agent gets it (agent/extension.ts): the window and the token counter of the
 * model in use, that model for the summaries, and the state a summary must keep (the todo list,
 * unanswered widgets and secret requests, saved secret names) read from the agent at the time.
 */
import type { ModelProvider } from '../providers/types.ts';
import type { TodoItem } from '../tools/types.ts';
import { Compaction, type KeptState } from './compaction.ts';
import type { CalibrationBook } from './calibration-book.ts';
import { TokenCounter } from './tokens.ts';

/** What compaction reads from an agent (a TurnContext has it all). */
export interface CompactedAgent {
  readonly todos: readonly TodoItem[];
  readonly questions: {
    openQuestions(): Array<{
      id: string;
      kind: string;
      prompt: string;
      widget?: { options: ReadonlyArray<{ label: string }> };
    }>;
  };
  readonly secrets: { all(): Promise<ReadonlyMap<string, string>> };
}

/** The host's side: the model in use and its window. */
export interface ModelWindows {
  provider(): ModelProvider | null;
  /** The context window, in tokens, of a model (null: none configured). */
  window(model: string | null): number;
}

export class AgentCompactions {
  private readonly counters = new Map<string, Promise<TokenCounter>>();

  /** `calibrations`: where each model's learnt factor is kept across restarts (none: memory only). */
  constructor(
    private readonly models: ModelWindows,
    private readonly calibrations?: CalibrationBook,
  ) {}

  /** One token counter per model id, shared by every agent (its caches and calibration with it). */
  counter(model: string): Promise<TokenCounter> {
    let counter = this.counters.get(model);
    if (!counter) {
      const saved = this.calibrations?.factor(model) ?? Promise.resolve(undefined);
      counter = saved.then((factor) => TokenCounter.forModel(model, factor));
      this.counters.set(model, counter);
    }
    return counter;
  }

  for(agent: CompactedAgent): { compaction: Compaction } {
    const model = () => this.models.provider()?.model ?? null;
    return {
      compaction: new Compaction({
        window: () => this.models.window(model()),
        counter: () => this.counter(model() ?? 'unknown'),
        provider: () => this.models.provider(),
        kept: () => keptStateOf(agent),
        calibrated: (counter) => void this.calibrations?.save(counter.model, counter.factor),
      }),
    };
  }
}

export async function keptStateOf(agent: CompactedAgent): Promise<KeptState> {
  return {
    todos: agent.todos.map((todo) => ({ content: todo.content, status: todo.status })),
    openQuestions: agent.questions.openQuestions().map((q) => ({
      id: q.id,
      kind: q.kind,
      prompt: q.prompt,
      ...(q.widget ? { options: q.widget.options.map((option) => option.label) } : {}),
    })),
    secretNames: [...(await agent.secrets.all()).keys()].sort(),
  };
}
