/**
 * Compaction: what keeps each model call inside the model's context window while the transcript
 * stays whole. Before a call would pass 80 % of the window:
 *
 * 1. old tool outputs are pruned from the view (stubbed, with a note that they can be read again);
 * 2. if that is not enough, the older turns are summarised by one model call into a hidden user
 *    record (`[SAND_HIDDEN_PROMPT][summary] … before [tNu] …`) appended to the JSONL, and from then
 *    on the view is that summary, then the turns from `[tNu]` on, then what follows the record;
 * 3. a summary that fails (or cannot help: one turn alone is too big) falls back to leaving the
 *    oldest turns out of the view and cutting long outputs, with a notice; the turn goes on.
 *
 * Nothing earlier in the JSONL or the ledger is ever rewritten: the summary is one more record,
 * and the view is a pure function of the history (the records), so an agent read back after a
 * restart gets the view a live one has. The history is scanned incrementally: a call costs what
 * is new since the last call plus the size of the view, not the length of the agent's life.
 */
import { HIDDEN_PROMPT_MARKER } from '@sendbox/protocol';
import type { ModelMessage, ModelProvider, ModelToolSpec } from '../providers/types.ts';
import { modelCallView, type ContextLayer, type ModelCallView } from './model-call.ts';
import type { TokenCounter } from './tokens.ts';

/** What one model call sends besides the messages, and whose turn it is. */
export interface ModelCallPlan {
  system: string;
  tools: readonly ModelToolSpec[];
  turn: number;
  signal?: AbortSignal;
}

/** Where compaction writes: the turn's own writers (agent/turn-driver.ts). */
export interface CompactionIo {
  /** Appends a hidden user record to the JSONL (the model reads it; the UI never shows it). */
  recordHiddenPrompt(text: string): void;
  /** A notice in the ledger; `context-summarized` is drawn as a thin marker in the conversation. */
  recordNotice(text: string, reason: 'context-summarized' | 'context-truncated'): void;
}

/** What must survive a summary whatever the model writes in it (read at the time of the summary). */
export interface KeptState {
  todos: ReadonlyArray<{ content: string; status: string }>;
  /** Widgets and secret-requests the user has not answered yet. */
  openQuestions: ReadonlyArray<{ id: string; kind: string; prompt: string; options?: readonly string[] }>;
  /** Names of the secrets the agent's tools receive (never their values). */
  secretNames: readonly string[];
}

export interface CompactionOptions {
  /** Tokens the model in use reads in one call. */
  window(): number;
  /** The counter for the model in use. */
  counter(): Promise<TokenCounter>;
  /** The model that writes summaries (the agent's own); null: none, so no summary. */
  provider(): ModelProvider | null;
  kept(): Promise<KeptState>;
  /** The counter learnt a new factor from the provider's usage (kept across restarts). */
  calibrated?(counter: TokenCounter): void;
  /** Fraction of the window a call may fill (default 0.8). */
  threshold?: number;
}

/** The label of a summary record, after the hidden-prompt marker. */
export const SUMMARY_LABEL = '[summary]';
const SUMMARY_PREFIX = `${HIDDEN_PROMPT_MARKER}${SUMMARY_LABEL} `;
/** The first line of a summary record names the first turn it keeps. */
const SUMMARY_BOUNDARY = /^[^\n]*?before \[t(\d+)u\]/;
const TURN_START = /^\[t(\d+)u\]\n/;

const SUMMARY_INSTRUCTIONS = [
  'You write the memory of an agent whose conversation no longer fits in its context window.',
  'Summarise the transcript you are given (and the earlier summary at its start, if there is one) so the agent can carry on without it.',
  'Keep: what the user asked for and still wants; decisions and their reasons; facts, names, numbers, file paths, URLs and commands that matter;',
  'what was done and what is still open; what the agent promised the user; the user\u2019s preferences.',
  'Leave out pleasantries and tool output nobody needs again (it can be read again).',
  'Write plain prose or short bullet points, in the language of the conversation, addressed to the agent ("you").',
  'Never include a secret value. Answer with the summary only.',
].join(' ');

/** Longest a tool output is shown in the text the summary is written from. */
const SUMMARY_OUTPUT_CHARS = 2_000;
/** Longest a tool output stays when one turn alone passes the window. */
const TRUNCATED_OUTPUT_CHARS = 1_000;

type UserMessage = Extract<ModelMessage, { role: 'user' }>;
type ToolMessage = Extract<ModelMessage, { role: 'tool' }>;

/** Where the newest summary sits in one history array, found by scanning only what is new. */
interface SummaryScan {
  scanned: number;
  /** Index of the newest summary record, or -1. */
  summary: number;
  /** Index of the first message it keeps. */
  keepFrom: number;
  /** Every summary record seen (older ones are left out of the view). */
  records: Set<ModelMessage>;
}

/** The text of a message's first text part ('' when none). */
function firstText(message: ModelMessage): string {
  if (typeof message.content === 'string') return message.content;
  const part = message.content.find((p) => p.type === 'text');
  return part && part.type === 'text' ? part.text : '';
}

/** True for a summary record (a hidden user record this module wrote). */
export function isSummaryRecord(message: ModelMessage): boolean {
  return message.role === 'user' && firstText(message).startsWith(SUMMARY_PREFIX);
}

/** The turn a user message opens (`[tNu]` first), or undefined. */
function turnOf(message: ModelMessage): number | undefined {
  if (message.role !== 'user') return undefined;
  const m = TURN_START.exec(firstText(message));
  return m ? Number(m[1]) : undefined;
}

export class Compaction {
  private readonly scans = new WeakMap<readonly ModelMessage[], SummaryScan>();
  /** The raw count of each view handed out, for calibration by the provider's usage. */
  private readonly counted = new WeakMap<ModelCallView, { counter: TokenCounter; raw: number }>();
  /** The turn whose summary failed (no second try in it) and whose truncation was told. */
  private failedTurn = -1;
  private toldTurn = -1;

  constructor(private readonly options: CompactionOptions) {}

  private get threshold(): number {
    return this.options.threshold ?? 0.8;
  }

  /**
   * The view of one model call: the history since the newest summary, through the layers, fitted
   * into the window. May append a summary to `history` (and to the JSONL through `io`).
   */
  async view(
    history: ModelMessage[],
    plan: ModelCallPlan,
    layers: readonly ContextLayer[],
    io: CompactionIo,
  ): Promise<ModelCallView> {
    const counter = await this.options.counter();
    const window = this.options.window();
    const limit = Math.floor(window * this.threshold);
    let summarised = false;
    for (;;) {
      const since = this.sinceSummary(history);
      const view = await modelCallView(plan.system, since, layers);
      const fixed = counter.text(view.system) + counter.tools(plan.tools);
      const budget = limit / counter.factor - fixed;
      let raw = fixed + sum(view.messages, counter);
      if (raw - fixed <= budget) return this.handOut(view, counter, raw);
      // 1. Prune old tool outputs, down to well under the limit so the next calls do not prune again.
      const pruned = prune(view.messages, counter, budget, (window * 0.6) / counter.factor - fixed);
      raw = fixed + pruned.raw;
      if (pruned.raw <= budget) return this.handOut({ ...view, messages: pruned.messages }, counter, raw);
      // 2. Summarise the older turns, once per call.
      let failure: string | null = null;
      if (!summarised && this.failedTurn !== plan.turn) {
        const outcome = await this.summarise(history, since, plan, counter, window, fixed, io);
        if (outcome === 'done') {
          summarised = true;
          continue;
        }
        if (outcome !== 'nothing to summarise') {
          this.failedTurn = plan.turn;
          failure = outcome;
        }
      }
      // 3. Leave the oldest turns out, then cut long outputs.
      const cut = truncate(pruned.messages, counter, budget);
      if (this.toldTurn !== plan.turn) {
        this.toldTurn = plan.turn;
        io.recordNotice(
          'The conversation no longer fits in the model\u2019s context window' +
            (failure ? ` and summarising it failed (${failure})` : '') +
            ', so the oldest messages were left out of what the model reads. The transcript keeps everything.',
          'context-truncated',
        );
      }
      return this.handOut({ ...view, messages: cut.messages }, counter, fixed + cut.raw);
    }
  }

  /** Learns from the provider's report of the input tokens of `view` (a view this instance gave). */
  observe(view: ModelCallView, reportedInputTokens: number): void {
    const counted = this.counted.get(view);
    if (counted?.counter.calibrate(counted.raw, reportedInputTokens))
      this.options.calibrated?.(counted.counter);
  }

  private handOut(view: ModelCallView, counter: TokenCounter, raw: number): ModelCallView {
    this.counted.set(view, { counter, raw });
    return view;
  }

  /** The history as the model reads it: the newest summary, the turns it keeps, what follows it. */
  sinceSummary(history: readonly ModelMessage[]): readonly ModelMessage[] {
    let scan = this.scans.get(history);
    if (!scan || scan.scanned > history.length) {
      scan = { scanned: 0, summary: -1, keepFrom: 0, records: new Set() };
      this.scans.set(history, scan);
    }
    for (let i = scan.scanned; i < history.length; i++) {
      const message = history[i]!;
      if (!isSummaryRecord(message)) continue;
      scan.records.add(message);
      scan.summary = i;
      const boundary = SUMMARY_BOUNDARY.exec(firstText(message).slice(SUMMARY_PREFIX.length));
      const turn = boundary ? Number(boundary[1]) : undefined;
      let from = i;
      if (turn !== undefined) {
        for (let j = i - 1; j >= 0; j--) {
          if (turnOf(history[j]!) === turn) {
            from = j;
            break;
          }
        }
      }
      scan.keepFrom = from;
    }
    scan.scanned = history.length;
    if (scan.summary < 0) return history;
    const kept = history.slice(scan.keepFrom, scan.summary).filter((m) => !scan.records.has(m));
    return [history[scan.summary]!, ...kept, ...history.slice(scan.summary + 1)];
  }

  /**
   * Writes a summary of the turns before the newest ones that fit in a third of the window, and
   * appends it to the history. Returns 'done', 'nothing to summarise', or why it failed.
   */
  private async summarise(
    history: ModelMessage[],
    since: readonly ModelMessage[],
    plan: ModelCallPlan,
    counter: TokenCounter,
    window: number,
    fixed: number,
    io: CompactionIo,
  ): Promise<string> {
    const provider = this.options.provider();
    if (!provider) return 'no model is configured';
    const reserve = Math.min(2_000, Math.floor(window * 0.1));
    const keepBudget = Math.max(0, (window * this.threshold * 0.6) / counter.factor - fixed - reserve);
    // The newest turn start whose tail fits; the turn running now is always kept whole.
    let boundary = -1;
    let tail = 0;
    for (let i = since.length - 1; i > 0; i--) {
      tail += counter.message(since[i]!);
      if (turnOf(since[i]!) === undefined) continue;
      if (boundary >= 0 && tail > keepBudget) break;
      boundary = i;
    }
    if (boundary <= 0) return 'nothing to summarise';
    const turn = turnOf(since[boundary]!)!;
    const older = since.slice(0, boundary);
    let summary: string;
    try {
      summary = await this.writeSummary(provider, older, counter, window, reserve, plan.signal);
    } catch (error) {
      if (plan.signal?.aborted) throw error;
      return error instanceof Error ? error.message : String(error);
    }
    const text = summaryRecordText(turn, summary, await this.options.kept());
    io.recordHiddenPrompt(text);
    history.push({ role: 'user', content: [{ type: 'text', text }] });
    io.recordNotice(
      `The model\u2019s memory of the conversation before this point was summarised to fit its context window. The transcript keeps every message.`,
      'context-summarized',
    );
    return 'done';
  }

  /** One model call per chunk of the transcript that fits (usually one), each carrying the summary so far. */
  private async writeSummary(
    provider: ModelProvider,
    messages: readonly ModelMessage[],
    counter: TokenCounter,
    window: number,
    reserve: number,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const chunkBudget = Math.max(1_000, (window * 0.6) / counter.factor - counter.text(SUMMARY_INSTRUCTIONS));
    let summary = '';
    let chunk: string[] = [];
    let size = 0;
    const flush = async (): Promise<void> => {
      if (chunk.length === 0) return;
      const body =
        (summary ? `Summary of what came before:\n${summary}\n\nThen:\n` : '') +
        `<transcript>\n${chunk.join('\n\n')}\n</transcript>`;
      const result = await provider.step({
        system: SUMMARY_INSTRUCTIONS,
        messages: [{ role: 'user', content: [{ type: 'text', text: body }] }],
        tools: [],
        ...(signal ? { abortSignal: signal } : {}),
      });
      const text = result.text.trim();
      if (text === '') throw new Error('the model answered the summary request with no text');
      summary = clip(text, counter, reserve);
      chunk = [];
      size = 0;
    };
    for (const message of messages) {
      for (const line of transcriptLines(message)) {
        // Sized by characters (at most one token per 3): tokenizing a whole backlog would cost more than it saves.
        const clipped = clipChars(line, Math.max(200, Math.floor((chunkBudget / 2) * 3)));
        const lineSize = Math.ceil(clipped.length / 3);
        if (size + lineSize > chunkBudget - Math.ceil(summary.length / 3)) await flush();
        chunk.push(clipped);
        size += lineSize;
      }
    }
    await flush();
    return summary;
  }
}

/** The hidden record of a summary: what it replaces, the model's summary, and the state kept whatever it says. */
export function summaryRecordText(turn: number, summary: string, kept: KeptState): string {
  const lines = [
    `${SUMMARY_PREFIX}Your memory of this conversation before [t${turn}u] was summarised to fit your context window. ` +
      'The transcript still holds every message; here is the summary.',
    '',
    summary,
  ];
  const state: string[] = [];
  if (kept.todos.length > 0) {
    state.push('Your todo list:', ...kept.todos.map((todo) => `- [${todo.status}] ${todo.content}`));
  }
  if (kept.openQuestions.length > 0) {
    state.push(
      'Questions you asked that the user has not answered yet (their answer arrives as a message):',
      ...kept.openQuestions.map(
        (q) =>
          `- ${q.id} (${q.kind}): ${q.prompt}` +
          (q.options && q.options.length > 0 ? ` \u2014 options: ${q.options.join(' / ')}` : ''),
      ),
    );
  }
  if (kept.secretNames.length > 0) {
    state.push(
      `Secrets the user saved for you (environment variables of your tools): ${kept.secretNames.join(', ')}`,
    );
  }
  if (state.length > 0) lines.push('', 'When this summary was written:', ...state);
  return lines.join('\n');
}

function sum(messages: readonly ModelMessage[], counter: TokenCounter): number {
  let total = 0;
  for (const message of messages) total += counter.message(message);
  return total;
}

/** The stubbed form of each tool message, made once: the same objects every call (and counted once). */
const stubs = new WeakMap<ToolMessage, ToolMessage>();

/** Tool outputs stubbed oldest first, the two newest tool messages kept, until `target` (or all are). */
function prune(
  messages: readonly ModelMessage[],
  counter: TokenCounter,
  budget: number,
  target: number,
): { messages: ModelMessage[]; raw: number } {
  const out = [...messages];
  let raw = sum(out, counter);
  const toolAt = out.flatMap((m, i) => (m.role === 'tool' ? [i] : []));
  const prunable = toolAt.slice(0, Math.max(0, toolAt.length - 2));
  for (const i of prunable) {
    if (raw <= Math.min(budget, Math.max(target, 0))) break;
    const before = out[i] as ToolMessage;
    let after = stubs.get(before);
    if (!after) {
      after = stubbed(before, counter);
      stubs.set(before, after);
    }
    if (after === before) continue;
    raw += counter.message(after) - counter.message(before);
    out[i] = after;
  }
  return { messages: out, raw };
}

/** Outputs worth pruning (more than a stub) become a stub saying how to get them again. */
function stubbed(message: ToolMessage, counter: TokenCounter): ToolMessage {
  let changed = false;
  const content = message.content.map((part) => {
    if (part.type !== 'tool-result' || part.toolName === 'send_message') return part;
    const size = outputTokens(part.output, counter);
    if (size <= 60) return part;
    changed = true;
    return {
      ...part,
      output: {
        type: 'text' as const,
        value:
          `[Pruned from your context to make room: this ${part.toolName} output (about ${size} tokens) is ` +
          'still in the transcript. Run the call again (or read the file again) if you need it.]',
      },
    };
  });
  return changed ? { ...message, content } : message;
}

type ToolOutput = Extract<ToolMessage['content'][number], { type: 'tool-result' }>['output'];

function outputTokens(output: ToolOutput, counter: TokenCounter): number {
  if (output.type === 'text' || output.type === 'error-text') return counter.text(output.value);
  if (output.type === 'content') {
    return output.value.reduce((n, item) => n + (item.type === 'text' ? counter.text(item.text) : 1_600), 0);
  }
  return counter.text(JSON.stringify(output));
}

/**
 * The last resort: whole turns left out from the oldest (a summary at the front stays), with a
 * note where they were; then, when the newest turn alone is too big, long outputs and texts cut.
 */
function truncate(
  messages: readonly ModelMessage[],
  counter: TokenCounter,
  budget: number,
): { messages: ModelMessage[]; raw: number } {
  const head = messages.length > 0 && isSummaryRecord(messages[0]!) ? 1 : 0;
  const starts = messages.flatMap((m, i) => (i >= head && turnOf(m) !== undefined ? [i] : []));
  const note: UserMessage = {
    role: 'user',
    content: [
      {
        type: 'text',
        text:
          `${HIDDEN_PROMPT_MARKER}Earlier messages of this conversation are left out of your context: they no ` +
          'longer fit in your context window. Ask the user if you need something from them.',
      },
    ],
  };
  let raw = sum(messages, counter);
  let from = head;
  for (const start of starts) {
    if (raw <= budget) break;
    if (start <= from) continue;
    for (let i = from; i < start; i++) raw -= counter.message(messages[i]!);
    from = start;
  }
  const out = from > head ? [...messages.slice(0, head), note, ...messages.slice(from)] : [...messages];
  if (from > head) raw += counter.message(note);
  if (raw <= budget) return { messages: out, raw };
  // One turn alone is too big: cut every long output and text (the newest message stays whole).
  for (let i = head; i < out.length - 1; i++) {
    const message = out[i]!;
    const cut = cutMessage(message);
    if (cut !== message) {
      raw += counter.message(cut) - counter.message(message);
      out[i] = cut;
    }
  }
  return { messages: out, raw };
}

function cutMessage(message: ModelMessage): ModelMessage {
  if (message.role === 'tool') {
    let changed = false;
    const content = message.content.map((part) => {
      if (part.type !== 'tool-result') return part;
      const output = part.output;
      if (
        (output.type === 'text' || output.type === 'error-text') &&
        output.value.length > TRUNCATED_OUTPUT_CHARS
      ) {
        changed = true;
        return { ...part, output: { ...output, value: clipChars(output.value, TRUNCATED_OUTPUT_CHARS) } };
      }
      return part;
    });
    return changed ? { ...message, content } : message;
  }
  if (typeof message.content === 'string') return message;
  let changed = false;
  const content = message.content.map((part) => {
    if (part.type === 'text' && part.text.length > TRUNCATED_OUTPUT_CHARS * 4) {
      changed = true;
      return { ...part, text: clipChars(part.text, TRUNCATED_OUTPUT_CHARS * 4) };
    }
    return part;
  });
  return changed ? ({ ...message, content } as ModelMessage) : message;
}

function clipChars(text: string, chars: number): string {
  if (text.length <= chars) return text;
  return `${text.slice(0, chars)}\n[\u2026 ${text.length - chars} more characters cut to fit the context window]`;
}

/** A summary longer than its reserve is cut (a model that ignores the length it was given). */
function clip(text: string, counter: TokenCounter, tokens: number): string {
  const size = counter.text(text);
  if (size <= tokens) return text;
  return clipChars(text, Math.floor((text.length * tokens) / size));
}

/** A message as lines of the plain transcript a summary is written from. */
function transcriptLines(message: ModelMessage): string[] {
  if (message.role === 'system') return [];
  if (typeof message.content === 'string') return [`${message.role}: ${message.content}`];
  const lines: string[] = [];
  for (const part of message.content) {
    if (part.type === 'text') {
      const who = message.role === 'assistant' ? 'agent (private note)' : 'user';
      lines.push(`${who}: ${part.text}`);
    } else if (part.type === 'tool-call') {
      lines.push(`agent called ${part.toolName} ${JSON.stringify(part.input)}`);
    } else if (part.type === 'tool-result') {
      const output = part.output;
      const value =
        output.type === 'text' || output.type === 'error-text'
          ? output.value
          : output.type === 'content'
            ? output.value.map((item) => (item.type === 'text' ? item.text : '[image]')).join('\n')
            : JSON.stringify(output);
      lines.push(`${part.toolName} result: ${clipChars(value, SUMMARY_OUTPUT_CHARS)}`);
    } else if (part.type === 'image' || part.type === 'file') {
      lines.push(`${message.role}: [image]`);
    }
  }
  return lines;
}
