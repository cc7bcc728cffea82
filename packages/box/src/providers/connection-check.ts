/**
 * "Test connection" of the settings panel: one small model call with the settings as typed, and
 * a sentence that names what is wrong when it fails (nothing listening, an unknown host, a refused
 * key, a wrong base URL or model id, a timeout), in the panel's terms. A streaming provider is
 * asked to stream, so an endpoint that cannot is found here too and the answer says so.
 */
import { APICallError } from 'ai';
import type { ModelProvider } from './types.ts';

export interface ConnectionCheck {
  ok: boolean;
  /** One sentence for the panel. */
  message: string;
  /** Whether the endpoint streams (null when the call failed before it could tell). */
  streams: boolean | null;
  elapsedMs: number;
}

/** The check's own deadline: a panel waits for an answer, not for a model's whole idle timeout. */
export const CONNECTION_CHECK_TIMEOUT_MS = 20_000;

export async function checkConnection(
  provider: ModelProvider,
  where: string,
  timeoutMs = CONNECTION_CHECK_TIMEOUT_MS,
): Promise<ConnectionCheck> {
  const started = Date.now();
  const streamsBefore = streamsOf(provider);
  try {
    await provider.step({
      system: 'This is a connection test. Reply with the word OK.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Connection test: reply OK.' }] }],
      tools: [],
      abortSignal: AbortSignal.timeout(timeoutMs),
      // Asks a streaming provider to stream, as a turn does.
      onSendDraft: () => undefined,
    });
    const elapsedMs = Date.now() - started;
    const streams = streamsOf(provider);
    const how =
      streams === false && streamsBefore !== false
        ? ' It does not stream: replies will arrive whole (it was asked to stream and answered without; turn Streaming off to skip that check).'
        : streams === false
          ? ' Streaming is off.'
          : '';
    return {
      ok: true,
      message: `Connected: ${provider.provider} model ${provider.model} at ${where} answered in ${elapsedMs} ms.${how}`,
      streams,
      elapsedMs,
    };
  } catch (error) {
    const elapsedMs = Date.now() - started;
    return {
      ok: false,
      message: whatIsWrong(error, where, provider.model, elapsedMs >= timeoutMs - 50 ? timeoutMs : null),
      streams: null,
      elapsedMs,
    };
  }
}

function streamsOf(provider: ModelProvider): boolean | null {
  return provider.streams ? provider.streams() : null;
}

/** The failure in the panel's words: the first cause in the chain that says something a user can act on. */
export function whatIsWrong(error: unknown, where: string, model: string, timedOutMs: number | null): string {
  const chain = causes(error);
  const code = chain.map((e) => (e as { code?: unknown }).code).find((c) => typeof c === 'string');
  if (code === 'ECONNREFUSED')
    return `Nothing answers at ${where} (connection refused): is the model server running, and is the port in the base URL right?`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `The host in ${where} is not found (DNS): check the base URL's host name.`;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET')
    return `${where} closed the connection: is it an HTTP model server (an https URL on an http server, or the reverse)?`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'DEPTH_ZERO_SELF_SIGNED_CERT')
    return `${where}'s TLS certificate is not trusted (${code}).`;
  if (chain.some((e) => e instanceof Error && e.message === 'bad port'))
    return `The port in ${where} is one browsers and Node refuse to call (a reserved port): use the model server's own port.`;
  const api = chain.find((e): e is APICallError => APICallError.isInstance(e));
  if (api?.statusCode !== undefined) {
    const status = api.statusCode;
    const said = oneLine(api.message);
    if (status === 401 || status === 403)
      return `The endpoint refused the API key (HTTP ${status}: ${said}): check the key, or enter one if the endpoint needs it.`;
    if (status === 404)
      return /model/i.test(`${api.message} ${api.responseBody ?? ''}`)
        ? `The model "${model}" is not found at ${where} (HTTP 404: ${said}): check the model id.`
        : `${api.url} is not found (HTTP 404): check the base URL (an OpenAI-compatible one usually ends in /v1).`;
    if (status === 429)
      return `The endpoint is rate limiting (HTTP 429: ${said}): the settings work; try again later.`;
    if (status === 400 && /model/i.test(said))
      return `The endpoint refused the model "${model}" (HTTP 400: ${said}).`;
    return `The endpoint answered HTTP ${status}: ${said}`;
  }
  if (timedOutMs !== null) {
    const after = timedOutMs >= 1000 ? `${Math.round(timedOutMs / 1000)} s` : `${timedOutMs} ms`;
    return `No answer from ${where} within ${after}.`;
  }
  const last = chain.at(-1);
  return `The call failed: ${oneLine(last instanceof Error ? last.message : String(error))}`;
}

/** The error and its causes, outermost first (`cause`, the SDK's `lastError`). */
function causes(error: unknown): unknown[] {
  const out: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && out.length < 8 && !out.includes(current)) {
    out.push(current);
    const next = current as { cause?: unknown; lastError?: unknown };
    current = next.lastError ?? next.cause;
  }
  return out;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
