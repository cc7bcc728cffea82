/**
 * Common -> UI ledger entries, for seeding a minted agent's `store.db`
 * (seed 003 "Continue-into / write" step 4). It goes further than txcript's
 * text-only seeding, so a continued session looks in the UI as it did:
 *
 * - When the transcript speaks through `send_message` (a Grok Bot session),
 *   each send becomes a `send-message` bubble of its stored type and plain
 *   assistant text becomes private `thinking` (C1). Otherwise (a Claude Code
 *   or Codex session) assistant text is the visible reply: a `message`.
 * - User text becomes a `message` holding what the user typed: hidden
 *   prompts and wakes around it are left out of the bubble, and a text that
 *   is only host text is kept whole but marked `hidden` (C5). An answer
 *   (`[Answering your question <id>: …]`) names the send it answers in
 *   `replyTo`, so the widget or secret request shows answered. Artifacts the
 *   user sent become `user-attachment`s.
 * - Other tool calls become compact `tool-call` rows with the status of their
 *   result; tool results themselves are not bubbles.
 *
 * Ids follow the host's patterns: `t<N>u` for user message N, `t<N>s<k>` for
 * sends, `t<N>a<k>` for the other assistant rows, `t<N>ua<k>` for user
 * attachments, with the boot turn (`tb…`) before the first user message.
 */
import {
  assistantId,
  BOOT_TURN,
  parseAnswerPrefix,
  decodeJsonlSendInput,
  sendId,
  userAttachmentId,
  userMessageId,
  type LedgerEntry,
  type Turn,
} from '@sendbox/protocol';
import type { Block, JsonValue, Transcript } from '../../model/common.ts';
import { basename } from 'node:path';
import { toolToCanonical } from '../../model/tool.ts';
import { toolToNative } from './codec.ts';
import { splitHiddenText } from './injected-text.ts';

const SEND_MESSAGE = 'send_message';

export interface LedgerSeed {
  entries: LedgerEntry[];
  /** Epoch ms of the last entry (or the session start), for `kv unreadState`. */
  lastActivityAt: number;
}

function epochMs(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? 0 : ms;
}

function isSendMessage(block: Block): boolean {
  return block.type === 'tool_use' && block.tool.name === 'Raw' && block.tool.tool_name === SEND_MESSAGE;
}

function oneLine(value: JsonValue, limit = 120): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
}

/** A short human summary of a tool call's input: its command, path or first string. */
function toolSummary(input: JsonValue): string | undefined {
  if (typeof input === 'string') return oneLine(input);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  for (const key of ['command', 'file_path', 'path', 'url', 'query', 'searchTerm', 'description']) {
    const v = input[key];
    if (typeof v === 'string' && v !== '') return oneLine(v);
  }
  return undefined;
}

/** The user's own words in a user text, and the send an answer names (its id as the source had it). */
function userWords(text: string): { visible: string; answers?: string } {
  const segments = splitHiddenText(text);
  const visible = segments.flatMap((s) => (s.hidden ? [] : [s.text])).join('\n');
  const first = segments[0];
  const answer =
    first?.hidden === true && first.kind === 'answering a question'
      ? parseAnswerPrefix(first.text + '\n')
      : undefined;
  return { visible, ...(answer !== undefined ? { answers: answer.id } : {}) };
}

export function commonToLedger(transcript: Transcript): LedgerSeed {
  const speaksThroughSends = transcript.messages.some((m) => m.content.some(isSendMessage));
  const status = new Map<string, 'success' | 'failure'>();
  for (const m of transcript.messages) {
    for (const b of m.content) {
      if (b.type === 'tool_result') status.set(b.tool_use_id, b.is_error === true ? 'failure' : 'success');
    }
  }

  const entries: LedgerEntry[] = [];
  let turn: Turn = BOOT_TURN;
  let nextUserTurn = 0;
  let assistantK = 0;
  let sendK = 0;
  let lastActivityAt = epochMs(transcript.meta.timestamp);
  /** New send id by the call's id, then by the id the source's result gave (`success.messageId`). */
  const sendByCall = new Map<string, string>();
  const sendBySourceId = new Map<string, string>();

  for (const message of transcript.messages) {
    const timestampMs = epochMs(message.timestamp);
    lastActivityAt = Math.max(lastActivityAt, timestampMs);
    if (message.role === 'user') {
      for (const b of message.content) {
        if (b.type !== 'tool_result' || !sendByCall.has(b.tool_use_id)) continue;
        const c = b.content;
        const success = typeof c === 'object' && c !== null && !Array.isArray(c) ? c.success : undefined;
        const sourceId =
          typeof success === 'object' && success !== null && !Array.isArray(success)
            ? success.messageId
            : undefined;
        if (typeof sourceId === 'string') sendBySourceId.set(sourceId, sendByCall.get(b.tool_use_id)!);
      }
      const text = message.content
        .flatMap((b) => (b.type === 'text' ? [b.text] : []))
        .join('\n\n')
        .trim();
      const artifacts = message.content.flatMap((b) => (b.type === 'artifact' ? [b.artifact] : []));
      if (text === '' && artifacts.length === 0) continue; // tool results only: no bubble
      turn = nextUserTurn++;
      assistantK = 0;
      sendK = 0;
      if (text !== '') {
        const { visible, answers } = userWords(text);
        const replyTo =
          answers === undefined ? undefined : (sendBySourceId.get(answers) ?? sendByCall.get(answers));
        entries.push({
          id: userMessageId(turn),
          kind: 'message',
          role: 'user',
          content: visible === '' ? text : visible,
          timestampMs,
          ...(visible === '' ? { hidden: true } : {}),
          ...(replyTo !== undefined ? { replyTo } : {}),
        });
      }
      artifacts.forEach((artifact, k) => {
        const path = artifact.source.type === 'path' ? artifact.source.path : artifact.name;
        // A file in a content-addressed store (the box's attachments) is named by its hash.
        const sha256 = /^([0-9a-f]{64})(\.|$)/.exec(basename(path))?.[1];
        entries.push({
          id: userAttachmentId(turn as number, k),
          kind: 'user-attachment',
          file_name: artifact.name,
          file_path: path,
          timestampMs,
          ...(artifact.source.media_type !== undefined ? { media_type: artifact.source.media_type } : {}),
          ...(sha256 !== undefined ? { sha256 } : {}),
        });
      });
      continue;
    }
    for (const block of message.content) {
      switch (block.type) {
        case 'text':
          if (block.text.trim() === '') break;
          entries.push(
            speaksThroughSends
              ? { id: assistantId(turn, assistantK++), kind: 'thinking', text: block.text, timestampMs }
              : {
                  id: assistantId(turn, assistantK++),
                  kind: 'message',
                  role: 'assistant',
                  content: block.text,
                  timestampMs,
                },
          );
          break;
        case 'thinking':
          if (block.text.trim() !== '') {
            entries.push({
              id: assistantId(turn, assistantK++),
              kind: 'thinking',
              text: block.text,
              timestampMs,
            });
          }
          break;
        case 'tool_use': {
          const { input } = toolToCanonical(block.tool);
          if (isSendMessage(block)) {
            const stored = decodeJsonlSendInput(input);
            // A failed send was never shown to the user: it is not a bubble.
            if (stored !== undefined && status.get(block.id) !== 'failure') {
              const id = sendId(turn, sendK++);
              sendByCall.set(block.id, id);
              entries.push({ id, kind: 'send-message', message: stored, timestampMs });
            }
            break;
          }
          const summary = toolSummary(input);
          entries.push({
            id: assistantId(turn, assistantK++),
            kind: 'tool-call',
            // The name the box's own rows carry (shell, read), as in the JSONL (codec.ts toolToNative).
            name: toolToNative(block.tool).name,
            status: status.get(block.id) ?? 'success',
            timestampMs,
            ...(summary !== undefined ? { summary } : {}),
          });
          break;
        }
        case 'tool_result':
        case 'image':
        case 'artifact':
          break;
      }
    }
  }
  return { entries, lastActivityAt };
}
