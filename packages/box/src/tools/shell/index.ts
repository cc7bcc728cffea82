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
import { defineTool, errorOutcome, oneLine, type ToolContext, type ToolOutcome } from '../types.ts';

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
  isBackground: z
    .boolean()
    .optional()
    .describe(
      'Run the command in the background: the call returns at once with a taskId; its output goes to a ' +
        'file; check on it or wait for it with await {taskId}. For servers, watchers and long builds.',
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
      const overQuota = new AbortController();
      // A background command is not held to the quota's per-command checks (it outlives the call).
      const disk = input.isBackground
        ? undefined
        : await options.disk?.begin(ctx.sandboxDir, () => overQuota.abort());
      const launch = await launchOf(input, ctx, options, disk?.fileBytes);
      if ('outcome' in launch) {
        await disk?.end();
        return launch.outcome;
      }
      const { spec, cwd, timeoutMs } = launch;
      if (input.isBackground) return startInBackground(input.command, spec, ctx);
      const signal = ctx.signal ? AbortSignal.any([ctx.signal, overQuota.signal]) : overQuota.signal;
      const run = await runCommand(spec, { timeoutMs, cap, signal, onOutput: ctx.onOutput });
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

/** The command's confined launch (folder checked, egress proxy bound), or the outcome refusing it. */
async function launchOf(
  input: z.output<typeof shellInput>,
  ctx: ToolContext,
  options: ShellOptions,
  fileBytes: number | undefined,
): Promise<
  { spec: LaunchSpec & { cwd: string }; cwd: string; timeoutMs: number } | { outcome: ToolOutcome }
> {
  let cwd: string;
  try {
    const folder = input.workingDirectory ?? '.';
    cwd = await withDeadline(`Finding ${folder}`, () => folderInSandbox(ctx.sandboxDir, folder));
  } catch (error) {
    return { outcome: errorOutcome((error as Error).message) };
  }
  const timeoutMs = input.timeout ?? options.timeoutMs ?? DEFAULT_SHELL_TIMEOUT_MS;
  const allowDomains = ctx.allowDomains ?? [];
  const proxySocket =
    options.confinement.status.confined && options.egress
      ? await options.egress.socketFor(ctx.sandboxDir, { allowDomains })
      : null;
  const spec = options.confinement.launch({
    command: input.command,
    sandboxDir: ctx.sandboxDir,
    cwd,
    env: ctx.env,
    ...(proxySocket ? { proxySocket } : {}),
    ...(fileBytes !== undefined ? { fileBytes } : {}),
  });
  if ('refused' in spec) return { outcome: errorOutcome(spec.refused, 'shell is disabled (no confinement)') };
  return { spec: { ...spec, cwd }, cwd, timeoutMs };
}

/**
 * `isBackground: true`: the same confined launch, handed to the agent's tasks (tasks/agent-tasks.ts);
 * the call returns at once with the task's id and output file (sendbox's shape; Cursor's background
 * spawn result carries the command and working directory the same way).
 */
async function startInBackground(
  command: string,
  spec: LaunchSpec & { cwd: string },
  ctx: ToolContext,
): Promise<ToolOutcome> {
  if (!ctx.tasks || !ctx.call) {
    return errorOutcome('Background commands cannot run here: run the command without isBackground.');
  }
  const label = ctx.scrub.text(command);
  let started;
  try {
    started = await ctx.tasks.startCommand({
      turn: ctx.call.turn,
      toolCallId: ctx.call.toolCallId,
      ...(ctx.call.subagentId ? { startedBy: ctx.call.subagentId } : {}),
      label,
      sandboxDir: ctx.sandboxDir,
      spec,
    });
  } catch (error) {
    return errorOutcome(`The background command could not start: ${(error as Error).message}`);
  }
  if ('refused' in started) return errorOutcome(started.refused, 'too many background commands');
  return {
    envelope: {
      success: {
        taskId: started.id,
        command: label,
        workingDirectory: spec.cwd,
        outputFilePath: started.outputPath ?? '',
      },
      isBackground: true,
    },
    summary: oneLine(`${label} (background ${started.id})`),
  };
}

interface CommandRun extends ConfinedRun {
  stdout: Capture;
  stderr: Capture;
  interleaved: Capture;
}

/** Collects up to `cap` bytes per stream (plus a margin so a secret cut at the cap is still scrubbed whole). */
async function runCommand(
  spec: LaunchSpec & { cwd: string },
  options: {
    timeoutMs: number;
    cap: number;
    signal?: AbortSignal | undefined;
    onOutput?: ((chunk: string) => void) | undefined;
  },
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
      options.onOutput?.(chunk.toString('utf8'));
    },
    onStderr: (chunk) => {
      stderr.add(chunk);
      interleaved.add(chunk);
      options.onOutput?.(chunk.toString('utf8'));
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
