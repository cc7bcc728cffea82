/**
 * Launching a harness's resume command after `txcript continue` saved the
 * session: argv as given (never through a shell), the terminal handed over
 * (`stdio: 'inherit'`), and the child's exit status passed back.
 */
import { spawn as nodeSpawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';

export type LaunchOutcome =
  /** The command ran; `code` is its exit code, or 128 + the signal number when a signal ended it. */
  | { kind: 'exited'; code: number; signal?: NodeJS.Signals }
  /** The program is not installed (ENOENT): nothing ran. */
  | { kind: 'not-found'; program: string };

export type SpawnLike = typeof nodeSpawn;

/** Signals sent to txcript alone (not to the terminal's process group) that the child should get too. */
const FORWARDED: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGHUP'];

/**
 * Run `argv` in `cwd` with the terminal attached and wait for it. While it
 * runs, Ctrl-C reaches the child through the terminal, so txcript itself
 * ignores SIGINT (otherwise it would die and leave the child without a
 * parent); SIGTERM and SIGHUP sent to txcript are passed on.
 */
export function launch(
  argv: readonly string[],
  cwd: string,
  options: { env?: NodeJS.ProcessEnv; spawn?: SpawnLike } = {},
): Promise<LaunchOutcome> {
  const [program, ...args] = argv;
  if (program === undefined || program === '') {
    return Promise.reject(new Error('the resume command is empty'));
  }
  const spawn = options.spawn ?? nodeSpawn;
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      cwd,
      env: options.env ?? process.env,
      stdio: 'inherit',
      shell: false,
    });
    const ignoreInterrupt = (): void => undefined;
    const forward = (signal: NodeJS.Signals): void => {
      child.kill(signal);
    };
    process.on('SIGINT', ignoreInterrupt);
    for (const s of FORWARDED) process.on(s, forward);
    const cleanUp = (): void => {
      process.off('SIGINT', ignoreInterrupt);
      for (const s of FORWARDED) process.off(s, forward);
    };
    child.once('error', (error: NodeJS.ErrnoException) => {
      cleanUp();
      if (error.code === 'ENOENT') resolve({ kind: 'not-found', program });
      else reject(error);
    });
    child.once('exit', (code, signal) => {
      cleanUp();
      if (code !== null) resolve({ kind: 'exited', code });
      else {
        const number = signal === null ? 1 : (osConstants.signals[signal] ?? 0);
        resolve({ kind: 'exited', code: 128 + number, ...(signal !== null ? { signal } : {}) });
      }
    });
  });
}

/** argv as one line a POSIX shell reads back as the same words (for "run this by hand"). */
export function shellLine(argv: readonly string[]): string {
  return argv.map(shellWord).join(' ');
}

export function shellWord(word: string): string {
  if (/^[A-Za-z0-9_\-.,/:=@%+]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
