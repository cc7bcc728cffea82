/**
 * Expected failures of the CLI and how they are shown: one line on stderr,
 * `txcript: <what> (<where>) — <what to do>`, then optional detail lines,
 * and an exit code (1 runtime, 2 usage). Never a stack trace.
 */

export const EXIT_OK = 0;
export const EXIT_RUNTIME = 1;
export const EXIT_USAGE = 2;

export interface CliErrorParts {
  /** What went wrong. */
  what: string;
  /** Where: a file, a session, an option. */
  where?: string;
  /** What the user can do about it. */
  todo?: string;
  /** Further lines (e.g. candidate sessions), printed indented under the message. */
  details?: readonly string[];
  exitCode?: typeof EXIT_RUNTIME | typeof EXIT_USAGE;
}

export class CliError extends Error {
  override readonly name = 'CliError';
  readonly where: string | undefined;
  readonly todo: string | undefined;
  readonly details: readonly string[];
  readonly exitCode: typeof EXIT_RUNTIME | typeof EXIT_USAGE;
  constructor(parts: CliErrorParts) {
    super(parts.what);
    this.where = parts.where;
    this.todo = parts.todo;
    this.details = parts.details ?? [];
    this.exitCode = parts.exitCode ?? EXIT_RUNTIME;
  }
}

/** A usage error: the command line itself cannot be satisfied as written (exit 2). */
export function usageError(parts: Omit<CliErrorParts, 'exitCode'>): CliError {
  return new CliError({ ...parts, exitCode: EXIT_USAGE });
}

export function formatError(parts: Pick<CliErrorParts, 'what' | 'where' | 'todo' | 'details'>): string {
  const where = parts.where === undefined ? '' : ` (${parts.where})`;
  const todo = parts.todo === undefined ? '' : ` — ${parts.todo}`;
  const details = (parts.details ?? []).map((d) => `  ${d}\n`).join('');
  return `txcript: ${oneLine(parts.what)}${where}${todo}\n${details}`;
}

/** Collapse a message onto one line so each warning or error is exactly one line. */
export function oneLine(text: string): string {
  return text.replace(/\s*\r?\n\s*/g, ' ').trim();
}
