/**
 * One MCP server for one agent: the SDK's `Client` over a transport, started on first use. Its
 * tool list is asked once per start. A call that finds the server gone (it crashed before or
 * during the call) starts it again and tries once more; a call that passes its time ends with an
 * error the model can read, and the server stays up for the next call.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

/** The least time a server has to start and answer `initialize`. */
const START_TIMEOUT_MS = 60_000;

export const CLIENT_INFO = { name: 'sendbox', version: '0.1.0' };

/**
 * What a server's start gives: its transport (and, for a remote server, the transport to try when
 * the first one's connect fails, or null), or a reason it cannot start (model-readable).
 */
export type TransportPlan =
  { transport: Transport; fallback?: (error: unknown) => Transport | null } | { refused: string };
export type TransportStart = () => Promise<TransportPlan>;

export type ConnectionState = 'stopped' | 'starting' | 'ready' | 'failed';

/** A call that could not be made (the server would not start, or it refused); the text is model-readable. */
export class McpCallError extends Error {}

export interface ServerInfo {
  /** The server's own instructions (first line shown beside its name). */
  instructions?: string;
  title?: string;
}

export class McpConnection {
  private client: Client | null = null;
  private starting: Promise<Client> | null = null;
  private toolList: Tool[] | null = null;
  private info: ServerInfo = {};
  state: ConnectionState = 'stopped';
  lastError: string | null = null;
  /** Times the server was started (a restart after a crash counts). */
  starts = 0;

  constructor(
    readonly server: string,
    private readonly open: TransportStart,
    private readonly timeoutMs: number,
  ) {}

  get serverInfo(): ServerInfo {
    return this.info;
  }

  /** The server's tools (starting it if it is not running). */
  async tools(signal?: AbortSignal): Promise<Tool[]> {
    const client = await this.connected();
    if (!this.toolList) {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, {
          timeout: this.timeoutMs,
          ...(signal ? { signal } : {}),
        });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      this.toolList = tools;
    }
    return this.toolList;
  }

  /** Calls a tool; a server found dead is started again once. */
  async call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.connected();
      try {
        const result = await client.callTool({ name, arguments: args }, CallToolResultSchema, {
          timeout: this.timeoutMs,
          ...(signal ? { signal } : {}),
        });
        return result as CallToolResult;
      } catch (error) {
        if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) {
          throw new McpCallError(
            `The MCP tool ${this.server}/${name} did not answer within ${this.timeoutMs} ms, so the call was ` +
              'abandoned. Try again with a smaller request, or go on without it.',
          );
        }
        if (signal?.aborted) throw new McpCallError(`The call to ${this.server}/${name} was stopped.`);
        if (error instanceof McpCallError) throw error;
        if (attempt === 0 && this.state !== 'ready') continue; // it died during the call: once more
        throw new McpCallError(`The MCP server ${this.server} failed: ${(error as Error).message}`);
      }
    }
  }

  private async connected(): Promise<Client> {
    if (this.client && this.state === 'ready') return this.client;
    this.starting ??= this.start().finally(() => (this.starting = null));
    return this.starting;
  }

  private async start(): Promise<Client> {
    this.state = 'starting';
    this.toolList = null;
    this.starts++;
    const plan = await this.open().catch((error: Error) => ({ refused: error.message }));
    if ('refused' in plan) {
      this.state = 'failed';
      this.lastError = plan.refused;
      throw new McpCallError(plan.refused);
    }
    let client: Client;
    try {
      client = await this.connect(plan.transport).catch(async (error: unknown) => {
        const next = plan.fallback?.(error);
        if (!next) throw error;
        return this.connect(next);
      });
    } catch (error) {
      this.state = 'failed';
      this.lastError = (error as Error).message;
      // A refusal of the box's own (a server that needs the user to sign in) is already model-readable.
      if (error instanceof McpCallError) throw error;
      // A remote server's HTTP status says most (401: its credentials were refused).
      const status = (error as { code?: unknown }).code;
      const http = typeof status === 'number' && status >= 100 && status < 600 ? `HTTP ${status}: ` : '';
      throw new McpCallError(
        `The MCP server ${this.server} did not start: ${http}${(error as Error).message}. ` +
          'Tell the user; its log is in the box log.',
      );
    }
    const version = client.getServerVersion();
    const instructions = client.getInstructions();
    this.info = {
      ...(instructions ? { instructions } : {}),
      ...(version?.title ? { title: version.title } : {}),
    };
    this.client = client;
    this.state = 'ready';
    this.lastError = null;
    return client;
  }

  /** A client connected over `transport` (closed again when it does not connect). */
  private async connect(transport: Transport): Promise<Client> {
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    client.onclose = () => {
      if (this.client === client) {
        this.client = null;
        this.state = 'stopped';
      }
    };
    try {
      // A cold start (npx fetching a package) may take longer than a call may.
      await client.connect(transport, { timeout: Math.max(this.timeoutMs, START_TIMEOUT_MS) });
      return client;
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
  }

  /** Stops the server (idle, deleted agent, changed config, closing box). */
  async close(): Promise<void> {
    const client = this.client ?? (await this.starting?.catch(() => null)) ?? null;
    this.client = null;
    this.state = 'stopped';
    this.toolList = null;
    await client?.close().catch(() => {});
  }
}
