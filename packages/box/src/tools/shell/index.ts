/**
 * `shell`: runs a command with bash in the agent's sandbox folder, confined
 * (sandbox/confinement.ts), with a timeout (the whole sandbox is killed) and a
 * cap on captured output. Secrets reach the command only as environment
 * variables; its output is scrubbed of them before anything else sees it.
 */
import { z } from 'zod';
import type { Confinement, LaunchSpec } from '../../sandbox/confinement.ts';
import { runConfined, type ConfinedRun } from '../../sandbox/confined-run.ts';
import type { SandboxDisks } from '../../sandbox/disk-quota.ts';
import type { EgressProxies } from '../../sandbox/egress-proxy.ts';
import { folderInSandbox, withDeadline } from '../../sandbox/paths.ts';
import type { Scrubber } from '../../secrets/scrub.ts';
import { defineTool, errorOutcome, oneLine, type ToolOutcome } from '../types.ts';

export const DEFAULT_SHELL_TIMEOUT_MS = 60_000;
export const MAX_SHELL_TIMEOUT_MS = 10 * 60_000;
export const SHELL_OUTPUT_CAP_BYTES = 64 * 1024;

export const shellInput = z.strictObject({
  command: z.string().min(1, 'command must not be empty'),
  description: z.string().optional(),
  workingDirectory: z
    .string()
    .optional()
    .describe('Folder to run in, relative to your sandbox folder (default: the sandbox folder itself).'),
  timeout: z
    .number()
    .int()
    .positive()
    .max(MAX_SHELL_TIMEOUT_MS)
    .optional()
    .describe(
      `Timeout in milliseconds (default ${DEFAULT_SHELL_TIMEOUT_MS}, at most ${MAX_SHELL_TIMEOUT_MS}).`,
    ),
});

export interface ShellOptions {
  /** How commands are confined (or refused); see detectConfinement. */
  confinement: Confinement;
  /** Egress proxies for agents with an allowlist; without it sandboxes have no network at all. */
  egress?: EgressProxies;
  /** The sandboxes' disk quota: a command that outgrows it is stopped, and the model told. */
  disk?: SandboxDisks;
  timeoutMs?: number;
  outputCapBytes?: number;
}

export function shellTool(options: ShellOptions) {
  const cap = options.outputCapBytes ?? SHELL_OUTPUT_CAP_BYTES;
  return defineTool({
    name: 'shell',
    description:
      'Run a shell command (bash) in your sandbox folder. Returns stdout and the exit code; on a non-zero ' +
      'exit, stdout, stderr and the exit code. Output is capped; long output is cut with a marker.',
    input: shellInput,
    async run(input, ctx): Promise<ToolOutcome> {
      let cwd: string;
      try {
        const folder = input.workingDirectory ?? '.';
        cwd = await withDeadline(`Finding ${folder}`, () => folderInSandbox(ctx.sandboxDir, folder));
      } catch (error) {
        return errorOutcome((error as Error).message);
      }
      const timeoutMs = input.timeout ?? options.timeoutMs ?? DEFAULT_SHELL_TIMEOUT_MS;
      const allowDomains = ctx.allowDomains ?? [];
      const proxySocket =
        options.confinement.status.confined && options.egress
          ? await options.egress.socketFor(ctx.sandboxDir, { allowDomains })
          : null;
      const overQuota = new AbortController();
      const disk = await options.disk?.begin(ctx.sandboxDir, () => overQuota.abort());
      const spec = options.confinement.launch({
        command: input.command,
        sandboxDir: ctx.sandboxDir,
        cwd,
        env: ctx.env,
        ...(proxySocket ? { proxySocket } : {}),
        ...(disk ? { fileBytes: disk.fileBytes } : {}),
      });
      if ('refused' in spec) {
        await disk?.end();
        return errorOutcome(spec.refused, 'shell is disabled (no confinement)');
      }
      const signal = ctx.signal ? AbortSignal.any([ctx.signal, overQuota.signal]) : overQuota.signal;
      const run = await runCommand({ ...spec, cwd }, { timeoutMs, cap, signal });
      // What the disk quota has to say goes after the command's own words.
      const diskNote = [disk?.note, await disk?.end()].filter(Boolean).join('\n');
      // Real files: `spawnError {command, error}`, and `isBackground` beside every shell envelope.
      if (run.spawnError)
        return {
          envelope: {
            spawnError: { command: ctx.scrub.text(input.command), error: ctx.scrub.text(run.spawnError) },
            isBackground: false,
          },
          summary: oneLine(`Could not start the command: ${ctx.scrub.text(run.spawnError)}`),
        };
      const stdout = run.stdout.scrubbed(ctx.scrub);
      const stderr = [run.stderr.scrubbed(ctx.scrub), diskNote].filter(Boolean).join('\n');
      const command = ctx.scrub.text(input.command);
      if (run.exitCode === 0 && !run.timedOut) {
        return {
          envelope: { success: { stdout, exitCode: 0, ...(stderr ? { stderr } : {}) }, isBackground: false },
          summary: oneLine(command),
        };
      }
      const why = run.timedOut
        ? `timed out after ${timeoutMs} ms`
        : overQuota.signal.aborted
          ? 'stopped: disk quota'
          : `exit ${run.exitCode ?? run.signal}`;
      return {
        envelope: {
          failure: {
            command,
            exitCode: run.exitCode,
            ...(run.timedOut ? { timedOut: true } : {}),
            ...(run.signal ? { signal: run.signal } : {}),
            executionTime: run.durationMs,
            localExecutionTimeMs: run.durationMs,
            stdout,
            stderr,
            interleavedOutput: [run.interleaved.scrubbed(ctx.scrub), diskNote].filter(Boolean).join('\n'),
            // As the agent sees it: the absolute folder the command ran in.
            workingDirectory: cwd,
          },
          isBackground: false,
        },
        summary: oneLine(`${command} (${why})`),
      };
    },
  });
}

interface CommandRun extends ConfinedRun {
  stdout: Capture;
  stderr: Capture;
  interleaved: Capture;
}

/** Collects up to `cap` bytes per stream (plus a margin so a secret cut at the cap is still scrubbed whole). */
async function runCommand(
  spec: LaunchSpec & { cwd: string },
  options: { timeoutMs: number; cap: number; signal?: AbortSignal | undefined },
): Promise<CommandRun> {
  const stdout = new Capture(options.cap);
  const stderr = new Capture(options.cap);
  const interleaved = new Capture(options.cap);
  const run = await runConfined(spec, {
    cwd: spec.cwd,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    onStdout: (chunk) => {
      stdout.add(chunk);
      interleaved.add(chunk);
    },
    onStderr: (chunk) => {
      stderr.add(chunk);
      interleaved.add(chunk);
    },
  });
  return { ...run, stdout, stderr, interleaved };
}

const SCRUB_MARGIN = 4096;

class Capture {
  private chunks: Buffer[] = [];
  private kept = 0;
  private total = 0;
  constructor(private readonly cap: number) {}
  add(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.cap + SCRUB_MARGIN - this.kept;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
  }
  /**
   * The captured text, scrubbed, then cut to the cap. Scrubbing comes first so
   * a secret is matched whole; when output was cut, the last SCRUB_MARGIN
   * characters (where a secret may have been split) are dropped with the rest.
   */
  scrubbed(scrub: Scrubber): string {
    const clean = scrub.text(Buffer.concat(this.chunks).toString('utf8'));
    if (this.total <= this.cap) return clean;
    const safe = this.kept < this.total ? clean.slice(0, Math.max(0, clean.length - SCRUB_MARGIN)) : clean;
    return `${safe.slice(0, this.cap)}\n[output truncated: ${this.total} bytes in all, showing the first ${this.cap}]`;
  }
}
