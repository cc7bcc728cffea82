/**
 * Token counts of what a model call sends. Text is counted with gpt-tokenizer's o200k_base
 * encoding: exact for the OpenAI models that use it; for every other model (Grok's tokenizer is
 * not public) it is an estimate scaled by a factor that starts conservative and is calibrated by
 * the input tokens the provider reports after each call.
 *
 * Counts are cached per string and per message object, so a history that grows by appending is
 * counted once per new message, not once per call.
 */
import type { ModelMessage, ModelToolSpec } from '../providers/types.ts';

type Encoder = (text: string) => number;

let encoderLoad: Promise<Encoder> | null = null;

/** The o200k_base counter, loaded on first use (about 0.6 s): a box that never nears a window never loads it. */
function loadEncoder(): Promise<Encoder> {
  encoderLoad ??= import('gpt-tokenizer/encoding/o200k_base').then((module) => {
    // A transcript may quote special tokens (`<|endoftext|>`): they are text here, never control.
    const options = { disallowedSpecial: new Set<string>() };
    return (text: string) => module.countTokens(text, options);
  });
  return encoderLoad;
}

/**
 * Starts loading the counter now (a serving box calls it once it listens): the load blocks the
 * event loop for about 0.6 s, and on the first turn it stalled every request that arrived then.
 */
export function preloadTokenCounter(): void {
  void loadEncoder().catch(() => {
    encoderLoad = null; // the first turn tries again and reports the failure there
  });
}

/** Models whose own tokenizer is o200k_base: their counts are exact. */
const O200K_MODELS = /^(?:gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4)(?:-|$)/;

/** The factor an estimate starts with for a model whose tokenizer is unknown. */
export const UNKNOWN_TOKENIZER_FACTOR = 1.25;

const MIN_FACTOR = 0.5;
const MAX_FACTOR = 3;
const inBounds = (factor: number): boolean => factor >= MIN_FACTOR && factor <= MAX_FACTOR;

/** Tokens a provider adds around each message and each tool call (role, separators). */
const MESSAGE_OVERHEAD = 4;
/** What an image costs, counted high: providers charge 85–1,600 tokens per image by size. */
export const IMAGE_TOKENS = 1_600;
const STRING_CACHE_LIMIT = 200_000;

/**
 * Raw counts by text, per encoder and shared by every agent's counter: a raw count depends on the
 * text alone, and agents share their tool descriptions and most of their system prompt.
 */
const countsByEncoder = new WeakMap<Encoder, Map<string, number>>();

function sharedCounts(encode: Encoder): Map<string, number> {
  let counts = countsByEncoder.get(encode);
  if (!counts) countsByEncoder.set(encode, (counts = new Map<string, number>()));
  return counts;
}

export class TokenCounter {
  private readonly strings: Map<string, number>;
  private readonly messageCounts = new WeakMap<object, number>();
  private readonly objectCounts = new WeakMap<object, number>();
  /** Reported ÷ counted, from the provider's usage; applies to unknown tokenizers only. */
  private calibration: number;

  /** `factor`: a calibration learnt before (context/calibration-book.ts); ignored for an exact tokenizer. */
  constructor(
    private readonly encode: Encoder,
    readonly model: string,
    factor?: number,
  ) {
    this.strings = sharedCounts(encode);
    this.exact = O200K_MODELS.test(model.replace(/^.*\//, '').toLowerCase());
    this.calibration = this.exact
      ? 1
      : factor !== undefined && inBounds(factor)
        ? factor
        : UNKNOWN_TOKENIZER_FACTOR;
  }

  readonly exact: boolean;

  static async forModel(model: string, factor?: number): Promise<TokenCounter> {
    return new TokenCounter(await loadEncoder(), model, factor);
  }

  /** The factor raw counts are multiplied by (1 for an exact tokenizer). */
  get factor(): number {
    return this.calibration;
  }

  /**
   * Learns from a call: `counted` raw tokens were reported as `reported` input tokens. The factor
   * follows the report with a 5 % margin, within sane bounds; an exact tokenizer keeps 1. True
   * when the factor changed.
   */
  calibrate(counted: number, reported: number): boolean {
    if (this.exact || !(counted > 500) || !(reported > 0)) return false;
    const before = this.calibration;
    this.calibration = Math.min(MAX_FACTOR, Math.max(MIN_FACTOR, (reported / counted) * 1.05));
    return this.calibration !== before;
  }

  /** Raw tokens of a text (cached). */
  text(text: string): number {
    let count = this.strings.get(text);
    if (count === undefined) {
      count = this.encode(text);
      if (this.strings.size >= STRING_CACHE_LIMIT) this.strings.clear();
      this.strings.set(text, count);
    }
    return count;
  }

  private json(value: unknown): number {
    if (typeof value === 'string') return this.text(value);
    if (typeof value !== 'object' || value === null) return this.text(JSON.stringify(value) ?? 'null');
    let count = this.objectCounts.get(value);
    if (count === undefined) {
      count = this.text(JSON.stringify(value));
      this.objectCounts.set(value, count);
    }
    return count;
  }

  /** Raw tokens of one message (cached per message object: the history's messages are counted once). */
  message(message: ModelMessage): number {
    let count = this.messageCounts.get(message);
    if (count !== undefined) return count;
    count = MESSAGE_OVERHEAD;
    if (typeof message.content === 'string') count += this.text(message.content);
    else {
      for (const part of message.content) count += this.part(part);
    }
    this.messageCounts.set(message, count);
    return count;
  }

  private part(part: Exclude<ModelMessage['content'], string>[number]): number {
    switch (part.type) {
      case 'text':
      case 'reasoning':
        return this.text(part.text);
      case 'image':
      case 'file':
        return IMAGE_TOKENS;
      case 'tool-call':
        return MESSAGE_OVERHEAD + this.text(part.toolName) + this.json(part.input);
      case 'tool-result': {
        const output = part.output;
        let count = MESSAGE_OVERHEAD + this.text(part.toolName);
        if (output.type === 'text' || output.type === 'error-text') count += this.text(output.value);
        else if (output.type === 'content') {
          for (const item of output.value) {
            count += item.type === 'text' ? this.text(item.text) : IMAGE_TOKENS;
          }
        } else count += this.json('value' in output ? output.value : output);
        return count;
      }
      case 'tool-approval-request':
      case 'tool-approval-response':
        return this.json(part);
    }
  }

  /**
   * Raw tokens of the tool specs: each one's name, description and schema. The schema is counted
   * once per object (the turn driver hands the same schema objects to every turn in a new list;
   * serialising the whole list again cost each turn more than its ledger writes).
   */
  tools(specs: readonly ModelToolSpec[]): number {
    let count = 0;
    for (const spec of specs)
      count +=
        MESSAGE_OVERHEAD + this.text(spec.name) + this.text(spec.description) + this.json(spec.inputSchema);
    return count;
  }

  /** Raw tokens of a whole call: system, tools and messages. */
  call(system: string, tools: readonly ModelToolSpec[], messages: readonly ModelMessage[]): number {
    let count = this.text(system) + this.tools(tools);
    for (const message of messages) count += this.message(message);
    return count;
  }

  /** What the model will be charged, as this counter judges it: raw × factor, rounded up. */
  scaled(raw: number): number {
    return Math.ceil(raw * this.calibration);
  }
}
