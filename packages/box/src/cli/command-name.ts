/**
 * How the terminal names a sendbox command so that pasting it works: `sendbox …` when a `sendbox`
 * on PATH is this very box (a global install or `npm link` of this checkout), otherwise the
 * absolute `node …/bin/sendbox.mjs …` (started by `npm start`, nothing on PATH, or another copy
 * installed there).
 */
import { accessSync, constants, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** This box's executable. */
export const SENDBOX_BIN = fileURLToPath(new URL('../../bin/sendbox.mjs', import.meta.url));

function realpath(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/** The first executable `name` on `PATH`, as its real path. */
function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    // npm and npx put node_modules/.bin first on the PATH of what they start: not the user's shell's.
    if (dir === '' || path.basename(dir) === '.bin') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    return realpath(candidate);
  }
  return undefined;
}

/** `word` as one shell word: quoted when it holds anything a shell would split or expand. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** `sendbox <args>` as the user can run it from any folder. */
export function sendboxCommand(args: string, env: NodeJS.ProcessEnv = process.env): string {
  const self = realpath(SENDBOX_BIN) ?? SENDBOX_BIN;
  const command = onPath('sendbox', env) === self ? 'sendbox' : `node ${shellWord(SENDBOX_BIN)}`;
  return `${command} ${args}`;
}
