/** The SecretsStore contract: every backend's secret store passes it (run by stores/files/secrets.test.ts). */
import { describe, expect, it } from 'vitest';
import { useBackend, type Backend } from './contract.ts';
import type { SecretsStore } from './secrets.ts';

export function secretsContract(backend: string, make: Backend<SecretsStore>): void {
  describe(`SecretsStore contract (${backend})`, () => {
    const open = useBackend(make);

    it('saves secrets by name, replaces a value, and keeps them across a reopen', async () => {
      const secrets = await open();
      expect([...(await secrets.all())]).toEqual([]);
      await secrets.set('API_TOKEN', 'one');
      await secrets.set('OTHER', 'two');
      await secrets.set('API_TOKEN', 'three');
      expect(Object.fromEntries(await secrets.all())).toEqual({ API_TOKEN: 'three', OTHER: 'two' });
      expect(Object.fromEntries(await (await open()).all())).toEqual({ API_TOKEN: 'three', OTHER: 'two' });
    });

    it('refuses a name that is not an environment variable name, and keeps the rest', async () => {
      const secrets = await open();
      await secrets.set('KEEP', 'v');
      await expect(secrets.set('not a name', 'x')).rejects.toThrow(/not a valid environment variable name/);
      expect(Object.fromEntries(await (await open()).all())).toEqual({ KEEP: 'v' });
    });
  });
}
