/**
 * The gateway client (docs/gateway.md): `POST /api/<method>`, every response checked with
 * Zod. The page holds no token: a request is signed in by the browser's HttpOnly session
 * cookie together with this tab's proof in `X-Sendbox-Session` (tab-session.ts), which no
 * other server on this host ever sees. An error's message is a sentence for the person at the
 * page (the gateway's own message, or what the status means); the method and the status ride on
 * the error for code to branch on.
 */
import type { z } from 'zod';
import {
  acceptedResponseSchema,
  cancelTurnResponseSchema,
  removedResponseSchema,
  listTasksResponseSchema,
  openSubagentResponseSchema,
  stopTaskResponseSchema,
  modelSettingsSchema,
  type ModelSettings,
  agentResponseSchema,
  connectionCheckSchema,
  deletedResponseSchema,
  openAgentResponseSchema,
  parseEntry,
  rosterResponseSchema,
  searchMessagesResponseSchema,
  type MessageHit,
  savedResponseSchema,
  sendPromptResponseSchema,
  statusResponseSchema,
  uploadResponseSchema,
  imageHostsResponseSchema,
  signedOutResponseSchema,
  agentSettingsSchema,
  memoryViewSchema,
  listRoutinesResponseSchema,
  updateRoutineResponseSchema,
  type RoutineChange,
  type RoutineView,
  mcpSettingsSchema,
  mcpServerCheckSchema,
  boxSecretsSchema,
  connectStartSchema,
  type McpSettingsView,
  type McpServerCheck,
  type BoxSecretsView,
  type ConnectStart,
  type AgentSettings,
  type AgentUpdate,
  type MemoryView,
  type RosterRow,
  type StatusResponse,
  type TodoItem,
  type TranscriptEntry,
} from './types.ts';
import { isShown } from '../transcript.ts';

export class ApiError extends Error {
  constructor(
    message: string,
    /** HTTP status, or 0 when the gateway could not be reached. */
    readonly status: number,
    /** The method's path (`/api/answerWidget`): for code and developers, not for the page. */
    readonly endpoint: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ApiError';
  }
}

/** The header that carries this tab's half of the session. */
export const SESSION_HEADER = 'X-Sendbox-Session';

/** Where the client gets this tab's proof, and asks for a newer one after a 401. */
export interface ProofSource {
  proof(): string | null;
  refresh(): Promise<string | null>;
}

/** What `openAgent` gives the conversation: its ledger entries unchecked, and the agent's task list. */
export interface OpenedAgent {
  entries: readonly unknown[];
  todos: TodoItem[];
  /** Answered secret requests whose secret this agent does not hold (a duplicate's copied ones). */
  secretRequestsNotHeld: readonly string[];
}

export interface ApiClientOptions {
  /** Defaults to the page's origin. */
  baseUrl?: string;
  fetch?: typeof fetch;
  session?: ProofSource;
}

export type ApiClient = ReturnType<typeof createApiClient>;

/** The settings panel's form, as `setModelSettings` and `testModelSettings` take it. */
export interface ModelSettingsInput {
  provider: 'xai' | 'openai-compatible';
  baseURL?: string;
  model?: string;
  /** Omitted: keep the saved key (while the endpoint stays); empty: none. */
  apiKey?: string;
  vision?: boolean;
  stream?: boolean;
  /** The model's context window in tokens; null: back to the box's table of known models. */
  contextTokens?: number | null;
}

export function createApiClient(options: ApiClientOptions = {}) {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const baseUrl = options.baseUrl ?? '';
  const session = options.session;

  /** The headers every request carries: this tab's proof, when it has one. */
  function sessionHeaders(): Record<string, string> {
    const proof = session?.proof() ?? null;
    return proof === null ? {} : { [SESSION_HEADER]: proof };
  }

  async function send(endpoint: string, init: RequestInit): Promise<Response> {
    try {
      return await doFetch(`${baseUrl}${endpoint}`, {
        ...init,
        credentials: 'same-origin',
        headers: { ...sessionHeaders(), ...(init.headers as Record<string, string> | undefined) },
      });
    } catch (cause) {
      throw new ApiError(
        'sendbox is not reachable: check that it is still running, then try again.',
        0,
        endpoint,
        { cause },
      );
    }
  }

  async function request(endpoint: string, init: RequestInit): Promise<Response> {
    let response = await send(endpoint, init);
    // Refused: this browser may have signed in anew in another tab (a new session). Ask the
    // other tabs once and retry with their proof; a body that is a stream cannot be re-sent.
    if (response.status === 401 && session && !(init.body instanceof ReadableStream)) {
      const before = session.proof();
      const after = await session.refresh();
      if (after !== null && after !== before) {
        await response.body?.cancel();
        response = await send(endpoint, init);
      }
    }
    if (!response.ok) throw new ApiError(await errorText(response), response.status, endpoint);
    return response;
  }

  async function call<S extends z.ZodType>(method: string, body: object, schema: S): Promise<z.infer<S>> {
    const endpoint = `/api/${method}`;
    const response = await request(endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return checked(endpoint, schema, await response.json());
  }

  async function blob(endpoint: string): Promise<Blob> {
    return (await request(endpoint, { method: 'GET' })).blob();
  }

  return {
    baseUrl,
    fetch: doFetch,
    sessionHeaders,
    /** Asks the other tabs for a newer session proof (the event stream, after a 401). */
    refreshSession: (): Promise<string | null> => session?.refresh() ?? Promise.resolve(null),
    getStatus: (): Promise<StatusResponse> => call('getStatus', {}, statusResponseSchema),
    listAgents: (): Promise<RosterRow[]> => call('listAgents', {}, rosterResponseSchema),
    /** Every agent's messages holding the query's words (the box's txcript index), best first. */
    searchMessages: async (query: string): Promise<MessageHit[]> =>
      (await call('searchMessages', { query }, searchMessagesResponseSchema)).hits,
    /** Without a name, the agent's first prompt names it. */
    createAgent: async (input: { name?: string; description?: string }): Promise<RosterRow> =>
      (await call('createAgent', input, agentResponseSchema)).agent,
    duplicateAgent: async (id: string): Promise<RosterRow> =>
      (await call('duplicateAgent', { id }, agentResponseSchema)).agent,
    deleteAgent: async (id: string): Promise<void> => {
      await call('deleteAgent', { id }, deletedResponseSchema);
    },
    openAgent: async (id: string): Promise<TranscriptEntry[]> => {
      const { entries } = await call('openAgent', { id }, openAgentResponseSchema);
      return parseEntries(entries, 'openAgent');
    },
    /** The ledger as sent, each entry still unchecked (validate with `parseNewest`/`parseEntries`), and the task list. */
    openAgentRaw: async (id: string): Promise<OpenedAgent> => {
      const { entries, todos, secretRequestsNotHeld } = await call(
        'openAgent',
        { id },
        openAgentResponseSchema,
      );
      return { entries, todos, secretRequestsNotHeld };
    },
    /** The agent's name, description, instructions, allowed domains and model (the settings dialog). */
    getAgent: (id: string): Promise<AgentSettings> => call('getAgent', { id }, agentSettingsSchema),
    updateAgent: (id: string, update: AgentUpdate): Promise<AgentSettings> =>
      call('updateAgent', { id, ...update }, agentSettingsSchema),
    /** The agent's memory and the user's (the memory view). */
    listMemory: (agentId: string): Promise<MemoryView> => call('listMemory', { agentId }, memoryViewSchema),
    /** Deletes a memory entry by its exact text. */
    forgetMemory: (agentId: string, scope: 'agent' | 'user', text: string): Promise<MemoryView> =>
      call('forgetMemory', { agentId, scope, text }, memoryViewSchema),
    /** The agent's routines, their next run and latest runs (the routines tab). */
    listRoutines: async (agentId: string): Promise<RoutineView[]> =>
      (await call('listRoutines', { agentId }, listRoutinesResponseSchema)).routines,
    /** Creates, changes, pauses, resumes, deletes or runs one routine; null once deleted. */
    updateRoutine: async (agentId: string, change: RoutineChange): Promise<RoutineView | null> =>
      (await call('updateRoutine', { agentId, ...change }, updateRoutineResponseSchema)).routine,
    sendPrompt: (input: { agentId: string; prompt: string; clientNonce: string }) =>
      call('sendPrompt', input, sendPromptResponseSchema),
    getModelSettings: (): Promise<ModelSettings> => call('getModelSettings', {}, modelSettingsSchema),
    /** The key goes into the request body only (omitted: keep the saved one); never returned. */
    setModelSettings: (input: ModelSettingsInput): Promise<ModelSettings> =>
      call('setModelSettings', input, modelSettingsSchema),
    /** One small model call with the form's settings, unsaved (the saved key when the endpoint stays). */
    testModelSettings: (input: ModelSettingsInput) => call('testModelSettings', input, connectionCheckSchema),
    /** Stops the agent's running turn (queued prompts still run after it). */
    cancelTurn: (agentId: string) => call('cancelTurn', { agentId }, cancelTurnResponseSchema),
    /** The agent's background tasks (running ones and those that ended recently). */
    listTasks: async (agentId: string) =>
      (await call('listTasks', { agentId }, listTasksResponseSchema)).tasks,
    /** Stops one background task (its whole process tree, or the subagent's turn). */
    stopTask: (agentId: string, taskId: string) =>
      call('stopTask', { agentId, taskId }, stopTaskResponseSchema),
    /** A subagent's steps, from its transcript (ledger-entry shaped; unknown ones dropped). */
    openSubagent: async (agentId: string, subagentId: string): Promise<TranscriptEntry[]> => {
      const { entries } = await call('openSubagent', { agentId, subagentId }, openSubagentResponseSchema);
      return entries.flatMap((raw) => {
        const entry = parseEntry(raw);
        return entry ? [entry] : [];
      });
    },
    /** Runs the agent again on its conversation as it stands (after a failed model call). */
    retryTurn: (agentId: string) => call('retryTurn', { agentId }, acceptedResponseSchema),
    /** Sends the last prompt again in place of its turn (the old one stays in the files, withdrawn). */
    regenerateReply: (input: { agentId: string; clientNonce: string }) =>
      call('regenerateReply', input, sendPromptResponseSchema),
    /** Sends the last prompt edited, in place of its turn. */
    editPrompt: (input: { agentId: string; messageId: string; prompt: string; clientNonce: string }) =>
      call('editPrompt', input, sendPromptResponseSchema),
    /** Takes back a prompt that has not started. */
    removeQueuedPrompt: (input: { agentId: string; nonce: string }) =>
      call('removeQueuedPrompt', input, removedResponseSchema),
    answerWidget: (input: { agentId: string; messageId: string; answer: string | string[] }) =>
      call('answerWidget', input, acceptedResponseSchema),
    /** Answers an approval card (a tool call waiting on the user); accepted once per card. */
    answerToolApproval: (input: {
      agentId: string;
      entryId: string;
      decision: 'allow' | 'allow-always' | 'deny';
    }) => call('answerToolApproval', input, acceptedResponseSchema),
    /** The value goes into the request body only: never logged, never kept. */
    submitSecret: (input: { agentId: string; messageId: string; value: string }) =>
      call('submitSecret', input, savedResponseSchema),
    uploadFile: async (input: { agentId: string; file: Blob; fileName: string; clientNonce?: string }) => {
      const endpoint = '/api/uploadFile';
      const headers: Record<string, string> = {
        'Content-Type': 'application/octet-stream',
        'X-Agent-Id': input.agentId,
        'X-File-Name': encodeURIComponent(input.fileName),
      };
      if (input.clientNonce) headers['X-Client-Nonce'] = input.clientNonce;
      const response = await request(endpoint, { method: 'POST', headers, body: input.file });
      const { entry } = checked(endpoint, uploadResponseSchema, await response.json());
      const parsed = parseEntry(entry);
      if (!parsed) throw new ApiError(`${endpoint}: the response entry has no id or seq`, 500, endpoint);
      return parsed;
    },
    attachment: (agentId: string, sha256: string): Promise<Blob> =>
      blob(`/api/attachment?${new URLSearchParams({ agentId, sha256 }).toString()}`),
    upload: (agentId: string, entryId: string): Promise<Blob> =>
      blob(`/api/upload?${new URLSearchParams({ agentId, entryId }).toString()}`),
    /** A remote image fetched by the gateway (never by the page itself): see docs/gateway.md. */
    remoteImage: (url: string): Promise<Blob> =>
      blob(`/api/remoteImage?${new URLSearchParams({ url }).toString()}`),
    /** Ends this browser's session (every tab of it), on the gateway. */
    signOut: async (): Promise<void> => {
      await call('signOut', {}, signedOutResponseSchema);
    },
    /** mcp.json's servers with their status and tools, and the file's problems. */
    getMcpSettings: (): Promise<McpSettingsView> => call('getMcpSettings', {}, mcpSettingsSchema),
    /** Adds or changes a server (`previousName`: renames it); a bad entry is a 400 naming the field. */
    setMcpServer: (input: { name: string; server: Record<string, unknown>; previousName?: string }) =>
      call('setMcpServer', input, mcpSettingsSchema),
    removeMcpServer: (name: string) => call('removeMcpServer', { name }, mcpSettingsSchema),
    /** The switch that adds or removes the `sessions` builtin server. */
    setMcpSessions: (enabled: boolean) => call('setMcpSessions', { enabled }, mcpSettingsSchema),
    /** Starts an entry as given (saved or not), lists its tools and stops it. */
    testMcpServer: (input: { name: string; server: Record<string, unknown> }): Promise<McpServerCheck> =>
      call('testMcpServer', input, mcpServerCheckSchema),
    listBoxSecrets: (): Promise<BoxSecretsView> => call('listBoxSecrets', {}, boxSecretsSchema),
    /** The value goes into the request body only; the answer holds names only. */
    setBoxSecret: (name: string, value: string): Promise<BoxSecretsView> =>
      call('setBoxSecret', { name, value }, boxSecretsSchema),
    deleteBoxSecret: (name: string): Promise<BoxSecretsView> =>
      call('deleteBoxSecret', { name }, boxSecretsSchema),
    /**
     * "Connect <server>": the authorization URL to open, or `connected` already. From a
     * conversation's card with its agent (told when connected), from the panel with none.
     */
    startMcpConnect: (agentId: string | null, server: string): Promise<ConnectStart> =>
      call('startMcpConnect', agentId === null ? { server } : { agentId, server }, connectStartSchema),
    listImageHosts: async (): Promise<string[]> =>
      (await call('listImageHosts', {}, imageHostsResponseSchema)).hosts,
    allowImageHost: async (host: string): Promise<string[]> =>
      (await call('allowImageHost', { host }, imageHostsResponseSchema)).hosts,
  };
}

/** Parses a list of raw ledger entries, dropping (with a warning) any that lack an id or seq. */
export function parseEntries(raw: readonly unknown[], where: string): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  raw.forEach((item, index) => {
    const entry = parseEntry(item);
    if (entry) out.push(entry);
    else console.warn(`${where}: entries[${index}] has no string id or numeric seq; skipped`);
  });
  return out;
}

/**
 * Splits a ledger (in seq order, as `openAgent` sends it) for the first paint: checks entries
 * from the newest back until `shown` of them take a row (thinking hidden), and leaves the older
 * ones unchecked for later (`parseEntries`). Checking 10,000 entries with Zod costs more than
 * painting the 200 that are mounted. Out of seq order (not what the gateway sends), everything
 * is checked and sorted at once.
 */
export function parseNewest(
  raw: readonly unknown[],
  shown: number,
  where: string,
): { newest: TranscriptEntry[]; older: readonly unknown[] } {
  if (!inSeqOrder(raw)) {
    return { newest: parseEntries(raw, where).sort((a, b) => a.seq - b.seq), older: [] };
  }
  const newest: TranscriptEntry[] = [];
  let taken = 0;
  let index = raw.length - 1;
  for (; index >= 0 && taken < shown; index--) {
    const entry = parseEntry(raw[index]);
    if (!entry) {
      console.warn(`${where}: entries[${index}] has no string id or numeric seq; skipped`);
      continue;
    }
    newest.push(entry);
    if (isShown(entry, false)) taken++;
  }
  return { newest: newest.reverse(), older: raw.slice(0, index + 1) };
}

/** Whether the seqs that are numbers only grow (entries without one are dropped later anyway). */
function inSeqOrder(raw: readonly unknown[]): boolean {
  let last = -Infinity;
  for (const item of raw) {
    const seq = typeof item === 'object' && item !== null ? (item as { seq?: unknown }).seq : undefined;
    if (typeof seq !== 'number') continue;
    if (seq <= last) return false;
    last = seq;
  }
  return true;
}

function checked<S extends z.ZodType>(endpoint: string, schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? issue.path.join('.') : '(body)';
  throw new ApiError(
    `sendbox answered in a form this page does not know (at ${where}: ${issue?.message ?? 'invalid'}); the page may be older than the box: reload it.`,
    500,
    endpoint,
  );
}

/**
 * A refused request as a sentence: the gateway's message without the method name it starts
 * with (`answerWidget: …`), else what the status means. A 500's details are in the box's log,
 * never in the answer, so the page says where to look.
 */
async function errorText(response: Response): Promise<string> {
  let detail = '';
  try {
    const body = (await response.json()) as { error?: unknown };
    if (typeof body.error === 'string') detail = body.error.replace(/^[a-z][A-Za-z]*: /, '').trim();
  } catch {
    // Not JSON: the status says it.
  }
  const { status } = response;
  if (status === 401) {
    // The gateway names the command as the user's shell runs it (not on PATH: `node …/sendbox.mjs login`).
    const login = /run `([^`]+)` for a fresh one/.exec(detail)?.[1] ?? 'sendbox login';
    return `This browser is signed out: run \`${login}\` in a terminal and open the link it prints.`;
  }
  if (status === 413) {
    const limit = /(\d[\d.]* ?(?:[KMG]i?B|bytes)) limit/.exec(detail)?.[1];
    return limit ? `That is too large: sendbox takes at most ${limit}.` : 'That is too large for sendbox.';
  }
  if (status === 500 || detail === '') {
    if (status >= 500 && status !== 507)
      return `sendbox could not do that (${status} ${response.statusText || 'server error'}); the terminal where it runs says why.`;
    if (detail === '') return `sendbox refused that (${status} ${response.statusText || 'error'}).`;
  }
  return capitalized(detail);
}

function capitalized(text: string): string {
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?)]$/.test(sentence) ? sentence : `${sentence}.`;
}
