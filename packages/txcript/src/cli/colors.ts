/**
 * Whether to colour a stream. `NO_COLOR` (any non-empty value, no-color.org)
 * wins, then `FORCE_COLOR`; otherwise only a terminal that is not `dumb`.
 * Decided from the injected environment, not picocolors' import-time guess,
 * so tests and the real process agree.
 */
import pc from 'picocolors';

export type Colors = ReturnType<typeof pc.createColors>;

export function colorsEnabled(env: Record<string, string | undefined>, isTTY: boolean | undefined): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '' && force !== '0' && force !== 'false') return true;
  return isTTY === true && env.TERM !== 'dumb';
}

export function colorsFor(env: Record<string, string | undefined>, isTTY: boolean | undefined): Colors {
  return pc.createColors(colorsEnabled(env, isTTY));
}
