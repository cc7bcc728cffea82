/**
 * The MCP stdio transport over a confined process: the SDK's `StdioClientTransport` spawns its
 * child itself and cannot hand it the supervisor's descriptors (the lifeline on fd 3, the seccomp
 * program on fd 4), so this one starts the launch through `spawnConfined` (sandbox/supervisor.ts)
 * and speaks newline-delimited JSON-RPC on its stdin and stdout with the SDK's own framing.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { LaunchSpec } from '../sandbox/confinement.ts';
import { spawnConfined, type ConfinedChild } from '../sandbox/supervisor.ts';

/** A server's stdout may carry one message this large (a 1 MB tool result, base64 images). */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export class ConfinedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private process: ConfinedChild | null = null;
  private readonly buffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  private closed = false;

  constructor(
    private readonly spec: LaunchSpec,
    private readonly cwd: string,
    /** Each line the server writes to stderr (its logs). */
    private readonly onStderrLine: (line: string) => void,
  ) {}

  get pid(): number | undefined {
    return this.process?.child.pid;
  }

  start(): Promise<void> {
    if (this.process) throw new Error('ConfinedStdioTransport already started');
    return new Promise((resolve, reject) => {
      const confined = spawnConfined(this.spec, { cwd: this.cwd, stdin: 'pipe' });
      this.process = confined;
      const { child } = confined;
      child.on('error', (error) => {
        if (!child.pid) reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      child.on('close', () => this.ended());
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout.on('data', (chunk: Buffer) => {
        this.buffer.append(chunk);
        this.drain();
      });
      let partial = '';
      child.stderr.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString('utf8')).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) if (line.trim()) this.onStderrLine(line);
        // A line that never ends is still shown, in pieces.
        if (partial.length > 8192) {
          this.onStderrLine(partial);
          partial = '';
        }
      });
    });
  }

  private drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC (a server printing to stdout): reported, and the rest goes on.
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.process?.child.stdin;
    if (!stdin || this.closed) return Promise.reject(new Error('the MCP server is not running'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the server: its stdin closes, and its whole sandbox dies with the lifeline. */
  close(): Promise<void> {
    const running = this.process;
    if (!running || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      running.child.once('close', () => resolve());
      running.child.stdin?.end();
      running.cutLifeline();
      const pid = running.child.pid;
      // Unconfined (--unsafe-host-tools) there is no lifeline: the process group goes.
      const kill = setTimeout(() => {
        try {
          if (pid !== undefined) process.kill(-pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }, 2000);
      kill.unref();
      running.child.once('close', () => clearTimeout(kill));
      if (running.child.exitCode !== null || running.child.signalCode !== null) resolve();
    });
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}
