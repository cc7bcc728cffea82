import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SecretStore, keyFilePath, loadOrCreateSecretKey } from './store.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-secrets-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('SecretStore', () => {
  it('keeps secrets encrypted at rest in a 0600 file, key outside the agent folder', async () => {
    const key = await loadOrCreateSecretKey(dir);
    expect((await stat(keyFilePath(dir))).mode & 0o777).toBe(0o600);
    expect(await loadOrCreateSecretKey(dir)).toEqual(key);
    const file = path.join(dir, 'agents', 'a1', 'secrets.enc');
    await import('node:fs/promises').then((fs) => fs.mkdir(path.dirname(file), { recursive: true }));
    const store = new SecretStore(file, key, 'a1');
    await store.set('GITHUB_TOKEN', 'ghp_supersecretvalue');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).not.toContain('ghp_supersecretvalue');
    const reopened = new SecretStore(file, key, 'a1');
    expect((await reopened.all()).get('GITHUB_TOKEN')).toBe('ghp_supersecretvalue');
  });

  it('does not decrypt for another agent or another key', async () => {
    const key = await loadOrCreateSecretKey(dir);
    const file = path.join(dir, 'secrets.enc');
    await new SecretStore(file, key, 'a1').set('X_TOKEN', 'value-1234');
    await expect(new SecretStore(file, key, 'a2').all()).rejects.toThrow(/cannot decrypt/);
    await expect(new SecretStore(file, Buffer.alloc(32, 7), 'a1').all()).rejects.toThrow(/cannot decrypt/);
  });

  it('refuses a name that is not an environment variable', async () => {
    const key = await loadOrCreateSecretKey(dir);
    await expect(new SecretStore(path.join(dir, 's.enc'), key, 'a').set('BAD NAME', 'v')).rejects.toThrow(
      /environment variable/,
    );
  });

  it('rejects a key file of the wrong size', async () => {
    await loadOrCreateSecretKey(dir);
    await writeFile(keyFilePath(dir), 'short');
    await expect(loadOrCreateSecretKey(dir)).rejects.toThrow(/32 bytes/);
  });
});
