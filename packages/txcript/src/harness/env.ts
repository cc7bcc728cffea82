/** Reading the store locations out of an environment (tests pass their own; never the real HOME). */
import os from 'node:os';

/** A non-empty env value, or undefined. */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v !== undefined && v !== '' ? v : undefined;
}

/** `$HOME` from the given env, falling back to the OS account's home. */
export function homeDir(env: NodeJS.ProcessEnv): string {
  return envValue(env, 'HOME') ?? envValue(env, 'USERPROFILE') ?? os.homedir();
}
