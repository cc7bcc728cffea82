/**
 * The scripted model for the gateway suites. It reads a command from the
 * latest user prompt and answers with one send_message:
 *
 *   say:<x>      → text "echo: <x>"
 *   image:<url>  → text "an image" with `images: [{url: <url>, alt: "grid image"}]`
 *   widget:<x>   → a widget with the options "yes" and "no"
 *   secret:<x>   → a secret-request for the environment variable <x>
 *   attach:<url> → an attachment of the file at <url> (a file:// URL inside the sandbox)
 *   block:<x>    → waits until the test calls `release("<x>")`, then says "released: <x>"
 *
 * After the send's result comes back it ends the turn. Anything else ends
 * the turn without a send.
 */
import type { ModelMessage, ModelProvider, ModelStepRequest, ModelStepResult } from '../providers/types.ts';

export interface TestModel extends ModelProvider {
  /** Lets a `block:<name>` turn continue. */
  release(name: string): void;
  /** Resolves once a `block:<name>` turn is waiting. */
  blocked(name: string): Promise<void>;
}

const COMMAND = /\b(say|image|widget|secret|attach|block):(\S+)/g;

function textOf(message: ModelMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((part) => ('text' in part && typeof part.text === 'string' ? part.text : ''))
    .join('\n');
}

function lastCommand(request: ModelStepRequest): [string, string] | null {
  const last = request.messages.at(-1);
  if (last === undefined || last.role !== 'user') return null;
  const matches = [...textOf(last).matchAll(COMMAND)];
  const match = matches.at(-1);
  return match?.[1] !== undefined && match[2] !== undefined ? [match[1], match[2]] : null;
}

let callCounter = 0;

function send(input: Record<string, unknown>): ModelStepResult {
  callCounter += 1;
  return {
    text: '',
    reasoning: '',
    toolCalls: [{ id: `call_${callCounter}`, name: 'send_message', input }],
    finishReason: 'tool-calls',
  };
}

const END: ModelStepResult = { text: '', reasoning: '', toolCalls: [], finishReason: 'stop' };

export function testModel(): TestModel {
  const gates = new Map<string, { release: () => void; released: Promise<void>; waiting: () => void }>();
  const waiters = new Map<string, Promise<void>>();
  const gate = (name: string) => {
    let entry = gates.get(name);
    if (entry === undefined) {
      let release = (): void => undefined;
      let waiting = (): void => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      waiters.set(name, new Promise<void>((resolve) => (waiting = resolve)));
      entry = { release, released, waiting };
      gates.set(name, entry);
    }
    return entry;
  };
  return {
    provider: 'scripted',
    model: 'gateway-test-model',
    release: (name) => gate(name).release(),
    blocked: (name) => {
      gate(name);
      return waiters.get(name) ?? Promise.resolve();
    },
    async step(request) {
      const command = lastCommand(request);
      if (command === null) return END;
      const [verb, arg] = command;
      switch (verb) {
        case 'say':
          return send({ type: 'text', content: `echo: ${arg}` });
        case 'image':
          return send({ type: 'text', content: 'an image', images: [{ url: arg, alt: 'grid image' }] });
        case 'widget':
          return send({
            type: 'widget',
            widget: { prompt: `choose for ${arg}`, options: [{ label: 'yes' }, { label: 'no' }] },
          });
        case 'secret':
          return send({ type: 'secret-request', secret: { label: `the ${arg}`, name: arg } });
        case 'attach':
          return send({ type: 'attachment', url: arg });
        case 'block': {
          const entry = gate(arg);
          entry.waiting();
          await entry.released;
          return send({ type: 'text', content: `released: ${arg}` });
        }
        default:
          return END;
      }
    },
  };
}
