/**
 * An MCP server's "needs sign-in" flag in a cluster (issue 25), on a real PostgreSQL and a real
 * OAuth-protected MCP server on loopback: set when a worker meets the server's 401, shown by every
 * gateway's settings view, and cleared for all of them by a sign-in through another worker.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startHttpServer } from '../mcp/testing/http-servers.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { useServices } from '../stores/postgres/backend.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import type { ClusterWorker } from './worker.ts';

const services = useServices();

describe('an MCP server’s sign-in flag across workers', () => {
  const kit = useClusterKit(services);

  it('is set on one worker, shown on every gateway, and cleared for all by a sign-in through another', async () => {
    const server = await startHttpServer('oauth');
    kit.defer(() => server.stop());
    const schema = kit.schemaName();
    const masterKey = randomBytes(32);
    const start = (name: string) =>
      kit.startWorker({
        dataDirName: name,
        schema,
        masterKey,
        env: {},
        provider: scriptedProvider([]),
        workerName: name,
        takeTurns: false,
        mcp: { log: () => undefined },
      });
    const [{ worker: a }, { worker: b }, { worker: c }] = [
      await start('a'),
      await start('b'),
      await start('c'),
    ];
    const signIn = async (worker: ClusterWorker) =>
      (await worker.host.mcpSettings.view()).servers.find((row) => row.name === 'secure')?.signIn;

    const entry = { url: server.url, allowPrivateHost: true };
    await a.host.mcpSettings.set('secure', entry);
    expect(await signIn(b)).toBeNull();

    // Worker A meets the 401: every gateway shows the server as needing a sign-in.
    expect(await a.host.mcpSettings.test('secure', entry)).toMatchObject({ ok: false });
    for (const worker of [a, b, c]) expect(await signIn(worker)).toBe('sign-in-needed');

    // The user signs in through B's gateway (its OAuth callback): the flag is gone on all three.
    const started = await b.host.startMcpConnect({
      server: 'secure',
      redirectUrl: 'http://127.0.0.1:9/oauth/mcp/callback',
    });
    if (!('authorizationUrl' in started)) throw new Error('no authorization URL');
    const redirect = await fetch(started.authorizationUrl, { redirect: 'manual' });
    const back = new URL(redirect.headers.get('location')!);
    await b.host.finishMcpConnect({
      state: back.searchParams.get('state')!,
      code: back.searchParams.get('code')!,
    });
    for (const worker of [a, b, c]) expect(await signIn(worker)).toBe('signed-in');
    expect(await c.host.mcpSettings.test('secure', entry)).toMatchObject({ ok: true });
  }, 60_000);
});
