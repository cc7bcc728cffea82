/**
 * Run a command to its end for a test, with a given environment (nothing
 * inherited but what the caller passes) and standard input, and collect its
 * exit code and output.
 */
import { spawn } from 'node:child_process';

export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runProcess(
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; stdin?: string; onStderr?: (chunk: string) => void },
): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      options.onStderr?.(d);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}
