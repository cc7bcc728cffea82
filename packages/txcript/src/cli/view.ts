/**
 * The compact, readable text of a session that `txcript view` prints: a
 * header, then every message under a `── #N · role · time ──` rule, tool calls
 * on one line, results cut to their first lines. Numbers are the 1-based
 * ordinals ranges use. Pure: transcript in, text out.
 */
import type { Block, JsonValue, Message, Tool, ToolOutput, Transcript } from '../model/common.ts';
import type { Colors } from './colors.ts';
import { splitHiddenText } from '../harness/grok-bot/injected-text.ts';
import { grokToolResultText } from './grok-tool-results.ts';
import { type ReplyPart, sendMessageReply } from './grok-view.ts';
import type { Selection } from './range.ts';
import { formatSelection } from './range.ts';

export interface ViewOptions {
  /** The harness the session came from; picks the reading (Grok Bot: C1/C5). */
  harness: string;
  colors: Colors;
  /** The messages to show (default: all). Numbers stay those of the whole session. */
  selection?: Selection;
  /** How many lines of a tool result to show before `… N more lines` (default 5). */
  resultLines?: number;
  /** Messages whose time the source does not give: printed without one rather than with a made-up one. */
  untimed?: ReadonlySet<number>;
}

/** How a harness's sessions read to a person. */
export interface Reading {
  /** Plain assistant text is private scratch, shown as thinking (C1). */
  assistantTextIsThinking: boolean;
  /** The reply is the `send_message` tool call's content (C1). */
  replyTool?: string;
  /** Mark injected prompts and wakes in user text (C5). */
  markHidden: boolean;
}

const PLAIN: Reading = { assistantTextIsThinking: false, markHidden: false };
const READINGS: Record<string, Reading> = {
  grok_bot: { assistantTextIsThinking: true, replyTool: 'send_message', markHidden: true },
};

/** How `harness`'s sessions read (search files their text under the same kinds). */
export function readingFor(harness: string): Reading {
  return READINGS[harness] ?? PLAIN;
}

const LINE_WIDTH = 160;
const SUMMARY_WIDTH = 120;

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

function firstLine(text: string): { line: string; more: number } {
  const lines = text.split(/\r?\n/);
  return { line: lines[0] ?? '', more: lines.length - 1 };
}

/** One line standing for a tool call's input: its command, path, URL or query. */
export function toolSummary(tool: Tool): { name: string; summary: string } {
  switch (tool.name) {
    case 'Bash':
      return { name: 'Bash', summary: tool.command };
    case 'Read':
    case 'Write':
    case 'Edit':
    case 'MultiEdit':
      return { name: tool.name, summary: tool.file_path };
    case 'Command':
      return { name: tool.command, summary: tool.args ?? '' };
    case 'Raw':
      return { name: tool.tool_name, summary: rawSummary(tool.input) };
  }
}

const SUMMARY_KEYS = [
  'command',
  'file_path',
  'path',
  'url',
  'searchTerm',
  'query',
  'pattern',
  'description',
  'prompt',
  'name',
];

function rawSummary(input: JsonValue): string {
  if (input === null) return '';
  if (typeof input === 'string') return input;
  if (typeof input === 'object' && !Array.isArray(input)) {
    for (const key of SUMMARY_KEYS) {
      const v = input[key];
      if (typeof v === 'string' && v !== '') return v;
    }
    const { toolCallId: _ignored, ...rest } = input;
    return JSON.stringify(rest);
  }
  return JSON.stringify(input);
}

const ENVELOPES = ['success', 'failure', 'error', 'rejected', 'spawnError'];
const TEXT_KEYS = [
  'stdout',
  'stderr',
  'content',
  'text',
  'output',
  'error',
  'errorMessage',
  'message',
  'reason',
];

/** The readable text of a tool result: strings as they are, envelopes opened, known text fields joined. */
export function resultText(content: ToolOutput): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  let value: JsonValue = content;
  if (typeof value === 'object' && !Array.isArray(value)) {
    const envelope = ENVELOPES.find((k) => Object.hasOwn(value as object, k));
    if (envelope !== undefined) value = value[envelope] ?? null;
  }
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'object' && v !== null && 'text' in v)) {
    return value.map((v) => resultText((v as { text: JsonValue }).text)).join('\n');
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const texts: string[] = [];
    for (const key of TEXT_KEYS) {
      const v = value[key];
      if (typeof v === 'string' && v !== '') texts.push(v);
      else if (Array.isArray(v) && key === 'content') texts.push(resultText(v));
    }
    if (texts.length > 0) return texts.join('\n');
  }
  return JSON.stringify(value);
}

function indentRest(lines: string[]): string[] {
  return lines.map((l, i) => (i === 0 ? l : `  ${l}`));
}

class MessageWriter {
  readonly lines: string[] = [];
  constructor(
    private readonly c: Colors,
    private readonly resultLines: number,
  ) {}

  text(text: string): void {
    this.lines.push(...text.split(/\r?\n/));
  }

  thinking(text: string): void {
    const lines = text.split(/\r?\n/);
    lines.forEach((l, i) => this.lines.push(this.c.dim(i === 0 ? `thinking: ${l}` : `  ${l}`)));
  }

  hidden(kind: string, text: string): void {
    const { line, more } = firstLine(text.trim());
    const tail = more > 0 ? ` … ${more} more line${more === 1 ? '' : 's'}` : '';
    this.lines.push(this.c.dim(`(hidden: ${kind}) ${clip(line, SUMMARY_WIDTH)}${tail}`));
  }

  reply(parts: ReplyPart[]): void {
    for (const p of parts) {
      if (p.card === true) this.lines.push(this.c.cyan(p.text));
      else this.text(p.text);
    }
  }

  call(name: string, summary: string): void {
    const { line, more } = firstLine(summary);
    const shown = clip(line, SUMMARY_WIDTH) + (more > 0 ? ' …' : '');
    this.lines.push(`${this.c.magenta('→')} ${this.c.bold(name)}${shown === '' ? '' : `: ${shown}`}`);
  }

  result(content: ToolOutput, isError: boolean, reading?: string): void {
    const text = (reading ?? resultText(content)).replace(/\s+$/, '');
    const all = text === '' ? [] : text.split(/\r?\n/);
    const shown = all.slice(0, this.resultLines).map((l) => clip(l, LINE_WIDTH));
    const marker = isError ? this.c.red('✗ error:') : this.c.dim('←');
    if (shown.length === 0) {
      this.lines.push(`${marker} ${this.c.dim('(no output)')}`);
      return;
    }
    const body = indentRest(shown).map((l) => (isError ? this.c.red(l) : l));
    body[0] = `${marker} ${body[0]}`;
    this.lines.push(...body);
    const hiddenLines = all.length - shown.length;
    if (hiddenLines > 0)
      this.lines.push(this.c.dim(`  … ${hiddenLines} more line${hiddenLines === 1 ? '' : 's'}`));
  }
}

function roleLabel(m: Message): string {
  if (m.role === 'user' && m.content.length > 0 && m.content.every((b) => b.type === 'tool_result'))
    return 'tool';
  return m.role;
}

function renderBlock(
  w: MessageWriter,
  b: Block,
  m: Message,
  reading: Reading,
  c: Colors,
  toolNames: ReadonlyMap<string, string>,
): void {
  switch (b.type) {
    case 'text':
      if (m.role === 'assistant' && reading.assistantTextIsThinking) w.thinking(b.text);
      else if (m.role === 'user' && reading.markHidden) {
        for (const s of splitHiddenText(b.text)) {
          if (s.hidden) w.hidden(s.kind, s.text);
          else w.text(s.text);
        }
      } else w.text(b.text);
      return;
    case 'thinking':
      w.thinking(b.text);
      return;
    case 'tool_use': {
      if (
        reading.replyTool !== undefined &&
        b.tool.name === 'Raw' &&
        b.tool.tool_name === reading.replyTool
      ) {
        w.reply(sendMessageReply(b.tool.input));
        return;
      }
      const { name, summary } = toolSummary(b.tool);
      w.call(name, summary);
      return;
    }
    case 'tool_result': {
      const isError = b.is_error === true;
      if (reading.replyTool !== undefined && toolNames.get(b.tool_use_id) === reading.replyTool) {
        // A delivered reply needs no echo; a refused one is news.
        if (isError)
          w.lines.push(c.red(`✗ not delivered: ${clip(firstLine(resultText(b.content)).line, LINE_WIDTH)}`));
        else w.lines.push(c.dim('← delivered'));
        return;
      }
      // Grok Bot's work tools read by their shapes (an image never as its base64).
      const grok =
        reading.replyTool === undefined
          ? undefined
          : grokToolResultText(toolNames.get(b.tool_use_id), b.content);
      w.result(b.content, isError, grok);
      return;
    }
    case 'image': {
      const kb = Math.round((b.source.data.length * 3) / 4 / 1024);
      w.lines.push(c.cyan(`[image: ${b.source.media_type}, ${kb} KB]`));
      return;
    }
    case 'artifact':
      w.lines.push(c.cyan(`[artifact: ${b.artifact.name} (${b.artifact.id})]`));
      return;
  }
}

export function renderView(t: Transcript, options: ViewOptions): string {
  const c = options.colors;
  const reading = readingFor(options.harness);
  const count = t.messages.length;
  const selection = options.selection ?? { start: 0, end: count };
  const toolNames = new Map<string, string>();
  for (const m of t.messages) {
    for (const b of m.content) if (b.type === 'tool_use') toolNames.set(b.id, toolSummary(b.tool).name);
  }

  const out: string[] = [];
  out.push(c.bold(t.meta.title ?? t.meta.id));
  const facts = [
    t.meta.id,
    options.harness,
    `${count} message${count === 1 ? '' : 's'}`,
    // The Unix epoch is what a reader puts when nothing gave a time: no start is better than a false one.
    ...(t.meta.timestamp.startsWith('1970-01-01T00:00:00') ? [] : [`started ${t.meta.timestamp}`]),
    ...(t.meta.cwd === undefined ? [] : [t.meta.cwd]),
    ...(t.meta.model === undefined ? [] : [t.meta.model]),
  ];
  out.push(c.dim(facts.join(' · ')));
  if (selection.start !== 0 || selection.end !== count) {
    out.push(c.dim(`showing ${formatSelection(selection)} of ${count}`));
  }
  for (let i = selection.start; i < selection.end; i++) {
    const m = t.messages[i]!;
    const role = roleLabel(m);
    const roleText = role === 'user' ? c.green(role) : role === 'assistant' ? c.blue(role) : c.yellow(role);
    const time = options.untimed?.has(i) === true ? [] : [m.timestamp];
    const parts = [`#${i + 1}`, roleText, ...time, ...(m.model === undefined ? [] : [m.model])];
    out.push('');
    out.push(`${c.dim('──')} ${parts.join(c.dim(' · '))} ${c.dim('──')}`);
    const w = new MessageWriter(c, options.resultLines ?? 5);
    for (const b of m.content) renderBlock(w, b, m, reading, c, toolNames);
    if (m.content.length === 0) w.lines.push(c.dim('(empty)'));
    out.push(...w.lines);
  }
  return `${out.join('\n')}\n`;
}
