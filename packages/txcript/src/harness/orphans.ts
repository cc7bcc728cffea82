/**
 * Tool pairing repair for targets whose model APIs reject unpaired tool
 * blocks (Anthropic Messages for Claude Code, OpenAI Responses for Codex):
 * both refuse a tool result with no earlier call, a call that never gets a
 * result, and two calls sharing one id. A resumed session carries the whole
 * history to the API, so one stray block would make it unusable.
 *
 * The repair is pure and idempotent, and changes nothing in a well-paired
 * transcript:
 * - a repeated tool_use id is renamed (`<id>_2`, `<id>_3`, …); results
 *   after it follow the newest call with that id;
 * - a result with no open call (unknown id, or a call already answered)
 *   becomes a user-visible text block in its place;
 * - a call with no later result gets a synthetic error result right after
 *   the message holding the call (joined to the tool results that open the
 *   next user message, when there are some).
 */
import type { Block, Message, ToolOutput, Transcript } from '../model/common.ts';

/** Text of the synthetic result for a call that never got one. */
export const MISSING_RESULT_TEXT = 'no result was recorded for this tool call';

export function orphanResultText(toolUseId: string, content: ToolOutput, isError: boolean): string {
  const body = typeof content === 'string' ? content : JSON.stringify(content);
  return `[tool result for unknown call ${toolUseId}${isError ? ' (error)' : ''}]\n${body}`;
}

export function repairToolPairing(transcript: Transcript): Transcript {
  const usedIds = new Set<string>();
  /** Original id -> the id of the newest still-open call that had it. */
  const open = new Map<string, string>();
  /** Final ids of calls that got a result. */
  const answered = new Set<string>();
  /** For each message index that holds calls, the final ids of its calls. */
  const callsAt: string[][] = [];
  let changed = false;

  /** The block as repaired: itself when it needs nothing (most do: a long session is copied only where it changes). */
  const repaired = (block: Block, calls: string[]): Block => {
    if (block.type === 'tool_use') {
      let id = block.id;
      for (let n = 2; usedIds.has(id); n++) id = `${block.id}_${n}`;
      usedIds.add(id);
      open.set(block.id, id);
      calls.push(id);
      return id === block.id ? block : { ...block, id };
    }
    if (block.type === 'tool_result') {
      const callId = open.get(block.tool_use_id);
      if (callId === undefined) {
        return {
          type: 'text',
          text: orphanResultText(block.tool_use_id, block.content, block.is_error === true),
        };
      }
      open.delete(block.tool_use_id);
      answered.add(callId);
      return callId === block.tool_use_id ? block : { ...block, tool_use_id: callId };
    }
    return block;
  };

  const messages: Message[] = transcript.messages.map((message, index) => {
    const calls: string[] = [];
    let content: Block[] | undefined;
    message.content.forEach((block, j) => {
      const after = repaired(block, calls);
      if (after !== block) content ??= message.content.slice(0, j);
      content?.push(after);
    });
    if (calls.length > 0) callsAt[index] = calls;
    if (content === undefined) return message;
    changed = true;
    return { ...message, content };
  });

  // Synthetic results, inserted back to front so indexes stay valid.
  for (let index = messages.length - 1; index >= 0; index--) {
    const missing = callsAt[index]?.filter((id) => !answered.has(id));
    if (missing === undefined || missing.length === 0) continue;
    changed = true;
    const holder = messages[index]!;
    const results: Block[] = missing.map((id) => ({
      type: 'tool_result',
      tool_use_id: id,
      content: MISSING_RESULT_TEXT,
      is_error: true,
    }));
    const next = messages[index + 1];
    if (next !== undefined && next.role === 'user' && next.content[0]?.type === 'tool_result') {
      let run = 0;
      while (next.content[run]?.type === 'tool_result') run++;
      messages[index + 1] = {
        ...next,
        content: [...next.content.slice(0, run), ...results, ...next.content.slice(run)],
      };
    } else {
      messages.splice(index + 1, 0, { role: 'user', content: results, timestamp: holder.timestamp });
    }
  }

  return changed ? { meta: transcript.meta, messages } : transcript;
}
