/**
 * What a command runs against: its streams, environment, clock and the
 * harnesses it may use. The real process supplies these in `main.ts`; tests
 * supply their own (captured streams, a temp HOME, a fake store).
 */
import type { Harness, Warning } from '../harness/types.ts';
import { type Colors, colorsFor } from './colors.ts';
import { formatError, oneLine, usageError } from './errors.ts';
import { shownWarnings } from './shown-warnings.ts';

export interface OutStream {
  /** Text, or UTF-8 bytes ending on a character boundary (cli/output.ts). */
  write(chunk: string | Uint8Array): unknown;
  isTTY?: boolean;
  /** A terminal's width in characters. */
  columns?: number;
}

export interface CliIo {
  stdout: OutStream;
  stderr: OutStream;
  readStdin(): Promise<string>;
  env: Record<string, string | undefined>;
  now(): Date;
  /** Harnesses to use instead of the registry (tests). */
  harnesses?: readonly Harness[];
  /**
   * Start `txcript index` in the background, detached, with this
   * environment; its pid, or undefined when it could not start. Absent (tests
   * that do not ask for it), a first search refreshes the index itself.
   */
  startIndexBuild?: () => number | undefined;
}

export interface CliContext {
  io: CliIo;
  /** Colours for stdout and stderr, each decided for its own stream. */
  out: Colors;
  err: Colors;
  harnesses(): Promise<readonly Harness[]>;
  findHarness(idOrAlias: string): Promise<Harness>;
  /** A warning about what the user named (a file to convert, the session to view): always shown. */
  warn(warning: Warning): void;
  /**
   * A warning met while listing every session (an unreadable file among many): shown once per
   * file and message per day (shown-warnings.ts), since it comes back on every list and search.
   */
  warnListing(warning: Warning): void;
  /** `--quiet`: no warnings at all (set before a command runs). */
  quiet: boolean;
  /** Remembers the warnings shown this run (shown-warnings.ts); called once, as the run ends. */
  finish(): Promise<void>;
}

export function createContext(io: CliIo): CliContext {
  const err = colorsFor(io.env, io.stderr.isTTY);
  // The registry pulls in every harness: loaded only when a command needs every one; one named is loaded alone.
  const registry = async () => import('../harness/registry.ts');
  const catalog = async () => import('../harness/catalog.ts');
  const shown = shownWarnings(io.env, () => io.now());
  const ctx: CliContext = {
    io,
    out: colorsFor(io.env, io.stdout.isTTY),
    err,
    harnesses: async () => io.harnesses ?? (await registry()).harnesses,
    findHarness: async (name) => {
      const { loadHarness, UnknownHarnessError } = await catalog();
      try {
        if (io.harnesses === undefined) return await loadHarness(name);
        return (await registry()).findHarness(name, io.harnesses);
      } catch (err) {
        if (!(err instanceof UnknownHarnessError)) throw err;
        throw usageError({
          what: `unknown harness "${err.requested}"`,
          todo: `use one of: ${err.known.join(', ')}`,
        });
      }
    },
    quiet: false,
    finish: () => shown.save(),
    warnListing: (w) => {
      if (!ctx.quiet && shown.show(w)) ctx.warn(w);
    },
    warn: (w) => {
      if (ctx.quiet) return;
      const where = w.line === undefined ? w.source : `${w.source}:${w.line}`;
      io.stderr.write(
        `${err.yellow(formatError({ what: `warning: ${oneLine(w.message)}`, where }).trimEnd())}\n`,
      );
    },
  };
  return ctx;
}
