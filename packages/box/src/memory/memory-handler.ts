/** The `memory` part of `update_state` (tools/update-state/): write or forget an entry of a scope. */
import type { Scrubber } from '../secrets/scrub.ts';
import { StateError, type StateHandler } from '../tools/update-state/index.ts';
import type { MemoryCommand } from '../tools/update-state/schema.ts';
import type { AgentMemory } from './agent-memory.ts';
import { MemoryRefusal, memoryBytes } from './memory-store.ts';

export function memoryHandler(
  memory: AgentMemory,
  agent: { scrubber(): Scrubber; now(): number },
): StateHandler<MemoryCommand> {
  return {
    async apply(input) {
      const scope = input.scope ?? 'agent';
      const file = memory.scope(scope);
      // A secret the model saw never lands in a file every model call reads.
      const text = agent.scrubber().text(input.text.trim());
      if (text === '') throw new StateError('memory.text is empty: give the entry to write or forget');
      try {
        if (input.action === 'write') {
          const { added, entries } = await file.write(text, agent.now());
          return {
            text: `${added ? 'Remembered' : 'Already remembered'} in the ${scope} memory (${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}, ${memoryBytes(entries)} of ${file.cap} bytes).`,
            target: scope,
          };
        }
        const { removed, entries } = await file.forget(text);
        return {
          text: `Forgot ${removed} ${removed === 1 ? 'entry' : 'entries'} of the ${scope} memory (${entries.length} left).`,
          target: scope,
        };
      } catch (error) {
        if (error instanceof MemoryRefusal) throw new StateError(error.message);
        throw error;
      }
    },
  };
}
