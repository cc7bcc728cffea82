/**
 * Run `txcript` in-process for a test: captured streams, the environment and
 * harnesses the test gives (never the user's HOME), and a clock.
 */
import type { CliIo } from '../src/cli/context.ts';
import { run } from '../src/cli/program.ts';

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(
  args: readonly string[],
  io: Pick<CliIo, 'env'> & Partial<Pick<CliIo, 'now' | 'harnesses' | 'startIndexBuild'>>,
): Promise<CliOutcome> {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    readStdin: () => Promise.resolve(''),
    now: () => new Date(),
    ...io,
  });
  return { code, stdout, stderr };
}
