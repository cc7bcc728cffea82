/** Reading the store locations out of an environment (tests pass their own; never the real HOME). */
import os from 'node:os';
import path from 'node:path';

/** A non-empty env value, or undefined. */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v !== undefined && v !== '' ? v : undefined;
}

/** `$HOME` from the given env, falling back to the OS account's home. */
export function homeDir(env: NodeJS.ProcessEnv): string {
  return envValue(env, 'HOME') ?? envValue(env, 'USERPROFILE') ?? os.homedir();
}

/**
 * Where Electron apps (Cursor, the Claude desktop app) keep their data:
 * `~/Library/Application Support` on macOS, `%APPDATA%` on Windows, else
 * `$XDG_CONFIG_HOME` or `~/.config`.
 */
export function electronAppData(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): string {
  const home = homeDir(env);
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support');
  if (platform === 'win32') return envValue(env, 'APPDATA') ?? path.join(home, 'AppData', 'Roaming');
  return envValue(env, 'XDG_CONFIG_HOME') ?? path.join(home, '.config');
}
