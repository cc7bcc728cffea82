/**
 * The `txcript` process: real streams, environment and clock, then `run`.
 * `bin/txcript.mjs` imports this after registering tsx.
 */
import { spawn } from 'node:child_process';
import { run } from './program.ts';

/** `txcript index` as a process of its own that outlives this one (search/index-build.ts). */
function startIndexBuild(): number | undefined {
  const script = process.argv[1];
  if (script === undefined) return undefined;
  try {
    const child = spawn(process.execPath, [...process.execArgv, script, '--quiet', 'index'], {
      detached: true,
      stdio: 'ignore',
      env: process.env,
    });
    child.on('error', () => undefined);
    child.unref();
    return child.pid;
  } catch {
    return undefined;
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

// `txcript list | head` closes the pipe early; that is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  readStdin,
  env: process.env,
  now: () => new Date(),
  startIndexBuild,
});
