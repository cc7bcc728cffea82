/**
 * What a command runs against: its streams, environment, clock and the
 * harnesses it may use. The real process supplies these in `main.ts`; tests
 * supply their own (captured streams, a temp HOME, a fake store).
 */
import type { Harness, Warning } from '../harness/types.ts';
import { type Colors, colorsFor } from './colors.ts';
import { formatError, oneLine, usageError } from './errors.ts';

export interface OutStream {
  /** Text, or UTF-8 bytes ending on a character boundary (cli/output.ts). */
  write(chunk: string | Uint8Array): unknown;
  isTTY?: boolean;
}

export interface CliIo {
  stdout: OutStream;
  stderr: OutStream;
  readStdin(): Promise<string>;
  env: Record<string, string | undefined>;
  now(): Date;
  /** Harnesses to use instead of the registry (tests). */
  harnesses?: readonly Harness[];
}

export interface CliContext {
  io: CliIo;
  /** Colours for stdout and stderr, each decided for its own stream. */
  out: Colors;
  err: Colors;
  harnesses(): Promise<readonly Harness[]>;
  findHarness(idOrAlias: string): Promise<Harness>;
  warn(warning: Warning): void;
}

export function createContext(io: CliIo): CliContext {
  const err = colorsFor(io.env, io.stderr.isTTY);
  // The registry pulls in every harness: loaded only when a command needs every one; one named is loaded alone.
  const registry = async () => import('../harness/registry.ts');
  const catalog = async () => import('../harness/catalog.ts');
  return {
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
    warn: (w) => {
      const where = w.line === undefined ? w.source : `${w.source}:${w.line}`;
      io.stderr.write(
        `${err.yellow(formatError({ what: `warning: ${oneLine(w.message)}`, where }).trimEnd())}\n`,
      );
    },
  };
}
