/**
 * An OpenAI chat-completion answer as a stream (`stream: true`): server-sent
 * `chat.completion.chunk` events, the content and each tool call's arguments cut into
 * word-sized deltas, then the finish reason and `[DONE]`. Shared by the loopback test models
 * (testing/openai-server.ts, the web tests' scripted model). Never used outside tests.
 */
import type { ServerResponse } from 'node:http';

export interface StreamedCompletion {
  id: string;
  model: string;
  content: string | null;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  /** Pause between deltas, in ms (0: write them all at once). */
  delayMs?: number;
  /** Told each tool-argument delta as it is written (benchmarks time them). */
  onDelta?: (piece: string) => void;
}

/** Cuts text after each space, so deltas arrive word by word. */
export function wordPieces(text: string): string[] {
  return text.match(/[^ ]* ?/g)?.filter((piece) => piece !== '') ?? [];
}

export async function writeCompletionStream(res: ServerResponse, answer: StreamedCompletion): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({
      id: answer.id,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: answer.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  const pause = () =>
    answer.delayMs ? new Promise((resolve) => setTimeout(resolve, answer.delayMs)) : Promise.resolve();
  res.write(chunk({ role: 'assistant', content: '' }));
  for (const piece of wordPieces(answer.content ?? '')) {
    if (res.destroyed) return;
    res.write(chunk({ content: piece }));
    await pause();
  }
  for (const [index, call] of answer.toolCalls.entries()) {
    res.write(
      chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    );
    for (const piece of wordPieces(call.arguments)) {
      if (res.destroyed) return;
      res.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      answer.onDelta?.(piece);
      await pause();
    }
  }
  res.write(chunk({}, answer.toolCalls.length > 0 ? 'tool_calls' : 'stop'));
  res.write(
    `data: ${JSON.stringify({
      id: answer.id,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: answer.model,
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    })}\n\n`,
  );
  res.end('data: [DONE]\n\n');
}
