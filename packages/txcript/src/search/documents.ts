/**
 * What of a session is searchable, and under which kind: one row per
 * message, its text filed by kind (user text, assistant text, thinking, tool
 * input, tool output), plus one row for the title. Harnesses are read the way
 * `view` reads them (a Grok Bot's `send_message` is its reply, its plain text
 * private thinking; injected prompts are not the user's words).
 *
 * Secrets: nothing is unscrubbed (the box's `[secret NAME redacted]` markers
 * are indexed as they are), and the user's answer to a Grok Bot
 * secret-request is never read into a row.
 */
import { isHiddenOrWake, splitHiddenText } from '../harness/grok-bot/injected-text.ts';
import type { Block, JsonValue, Message, Tool, Transcript } from '../model/common.ts';
import { isJsonObject } from '../model/json.ts';
import { sendMessageReply } from '../cli/grok-view.ts';
import { type Selection, formatSelection, toolPairs, widen } from '../cli/range.ts';
import { readingFor } from '../cli/view.ts';
import { KINDS, type Kind, type SearchRow } from './kinds.ts';

/**
 * Characters of each kind indexed per message. Tools produce most of a
 * session's bytes (file dumps, logs) and the index's cost grows with every
 * character, so a tool's input and output are indexed by their start and end
 * (where commands, paths and errors are); people's and models' words whole,
 * up to a bound for pasted walls of text.
 */
export const MAX_KIND_CHARS: Record<Kind, number> = {
  title: 1_024,
  user: 32_768,
  assistant: 32_768,
  thinking: 32_768,
  tool_input: 4_096,
  tool_output: 2_048,
};
/** Of a clipped text, the share kept from its end. */
const TAIL_SHARE = 0.25;

/** `text` within `max` characters: its head and its tail, joined by a marker line. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const tail = Math.floor(max * TAIL_SHARE);
  return `${text.slice(0, max - tail - 3)}\n…\n${text.slice(text.length - tail)}`;
}

function emptyTexts(): Record<Kind, string> {
  return { title: '', user: '', assistant: '', thinking: '', tool_input: '', tool_output: '' };
}

/** Every string in a JSON value (keys of objects too, since they can name things: `"PORT": 8080`). */
function jsonStrings(value: JsonValue, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number' || typeof value === 'boolean') out.push(String(value));
  else if (Array.isArray(value)) for (const v of value) jsonStrings(v, out);
  else if (value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      jsonStrings(v, out);
    }
  }
}

function toolInputText(tool: Tool): string {
  const out: string[] = [];
  if (tool.name === 'Raw') {
    out.push(tool.tool_name);
    jsonStrings(tool.input, out);
  } else {
    for (const [k, v] of Object.entries(tool))
      if (k !== 'name' || tool.name !== 'Command') jsonStrings(v as JsonValue, out);
  }
  return out.join('\n');
}

/** A Grok Bot secret-request, in either stored shape (grok-bot-format.md §5, C9); its label when it is one. */
const SECRET_SUMMARY = /^Requested a secret from the user securely: (.*)$/s;

function secretRequestLabel(input: JsonValue): string | undefined {
  if (!isJsonObject(input)) return undefined;
  if (input.type === 'secret-request') {
    const secret = isJsonObject(input.secret)
      ? input.secret
      : isJsonObject(input.secretRequest)
        ? input.secretRequest
        : {};
    return typeof secret.label === 'string' ? secret.label : '';
  }
  if (isJsonObject(input.text) && typeof input.text.content === 'string') {
    return SECRET_SUMMARY.exec(input.text.content)?.[1];
  }
  return undefined;
}

const ANSWER = /^\[Answering your question ([^:\]\n]*)(?::\s*"(.*?)")?\]/s;

/**
 * Which user messages answer a secret-request: the answer is the secret. An
 * answer is one when it names a secret-request's label, or when it is the
 * first user message after a secret-request (ids of Grok Bot messages and
 * their questions are not reliably joined, so the order decides too).
 */
function secretAnswers(messages: readonly Message[], replyTool: string): Set<number> {
  const labels = new Set<string>();
  const skipped = new Set<number>();
  let pending = false;
  messages.forEach((m, i) => {
    for (const b of m.content) {
      if (
        m.role === 'assistant' &&
        b.type === 'tool_use' &&
        b.tool.name === 'Raw' &&
        b.tool.tool_name === replyTool
      ) {
        const label = secretRequestLabel(b.tool.input);
        if (label !== undefined) {
          labels.add(label);
          pending = true;
        }
      }
    }
    if (m.role !== 'user') return;
    const texts = m.content.filter((b): b is Extract<Block, { type: 'text' }> => b.type === 'text');
    if (texts.length === 0) return;
    for (const b of texts) {
      for (const seg of splitHiddenText(b.text)) {
        if (!seg.hidden) continue;
        const answer = ANSWER.exec(seg.text.trim());
        if (answer !== null && (pending || labels.has(answer[2] ?? ''))) skipped.add(i);
      }
    }
    // The first user turn after the request is its answer, whatever it says.
    if (pending) skipped.add(i);
    pending = false;
  });
  return skipped;
}

function userText(text: string, markHidden: boolean): string {
  if (!markHidden || !isHiddenOrWake(text)) return text;
  return splitHiddenText(text)
    .filter((s) => !s.hidden)
    .map((s) => s.text)
    .join('\n');
}

/** Append `text` to a message's text of `kind`; each block is clipped, and so is their sum. */
function add(texts: Record<Kind, string>, kind: Kind, text: string): void {
  const max = MAX_KIND_CHARS[kind];
  if (text === '' || texts[kind].length >= max) return;
  const piece = clip(text, max);
  const joined = texts[kind] === '' ? piece : `${texts[kind]}\n${piece}`;
  texts[kind] = joined.length > max ? joined.slice(0, max) : joined;
}

const flat = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();

/** A title a harness made from the first prompt would only repeat that message's hits. */
function derivedTitle(title: string, rows: readonly SearchRow[]): boolean {
  const first = rows.find((r) => r.texts.user !== '');
  const t = flat(title).replace(/…$/, '');
  return first !== undefined && t !== '' && flat(first.texts.user).includes(t);
}

/** The searchable rows of a transcript read from `harness`, the title row first. */
export function searchRows(transcript: Transcript, harness: string, title: string | undefined): SearchRow[] {
  const reading = readingFor(harness);
  const { messages } = transcript;
  const rows: SearchRow[] = [];
  const skipped =
    reading.replyTool === undefined ? new Set<number>() : secretAnswers(messages, reading.replyTool);
  const pairs = toolPairs(messages);
  messages.forEach((m, i) => {
    if (skipped.has(i)) return;
    const texts = emptyTexts();
    for (const b of m.content) {
      switch (b.type) {
        case 'text':
          if (m.role === 'user') add(texts, 'user', userText(b.text, reading.markHidden));
          else add(texts, reading.assistantTextIsThinking ? 'thinking' : 'assistant', b.text);
          break;
        case 'thinking':
          add(texts, 'thinking', b.text);
          break;
        case 'tool_use':
          if (b.tool.name === 'Raw' && b.tool.tool_name === reading.replyTool) {
            add(
              texts,
              'assistant',
              sendMessageReply(b.tool.input)
                .map((p) => p.text)
                .join('\n'),
            );
          } else add(texts, 'tool_input', toolInputText(b.tool));
          break;
        case 'tool_result': {
          const out: string[] = [];
          jsonStrings(b.content, out);
          add(texts, 'tool_output', out.join('\n'));
          break;
        }
        case 'artifact':
          add(texts, 'tool_output', b.artifact.name);
          if (b.artifact.source.type === 'text') add(texts, 'tool_output', b.artifact.source.text);
          break;
        case 'image':
          break;
      }
    }
    if (KINDS.every((k) => texts[k] === '')) return;
    const one: Selection = { start: i, end: i + 1 };
    rows.push({ message: i + 1, range: formatSelection(widen(pairs, one)).slice(1), texts });
  });
  if (title !== undefined && title.trim() !== '' && !derivedTitle(title, rows)) {
    rows.unshift({ message: 0, range: '', texts: { ...emptyTexts(), title } });
  }
  return rows;
}
