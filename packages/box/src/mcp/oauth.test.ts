/**
 * MCP OAuth end to end: a real box and gateway, and on loopback an authorization server built from
 * the SDK's server auth pieces (mcpAuthRouter: metadata, dynamic registration, authorize, token)
 * with a protected MCP server (protected-resource metadata, bearer checks). The model's call gets
 * a 401, the conversation a "Connect" card; the page's connect gives the authorization URL, which a
 * plain HTTP client follows through the redirects to the box's callback; the next call works, an
 * expired token is refreshed; no token is in any file, event, log line or model request.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TestBox } from '../gateway/test-support.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { lastToolOutputs } from '../testing/host-fixture.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { startHttpServer, type TestHttpServer } from './testing/http-servers.ts';
import { everyFile, remoteBox } from './testing/remote-box.ts';

let box: TestBox | undefined;
let server: TestHttpServer | undefined;
afterEach(async () => {
  await box?.close();
  box = undefined;
  await server?.stop();
  server = undefined;
});

const echo = (text: string) => ({
  toolCalls: [{ name: 'mcp', input: { server: 'secure', toolName: 'echo', args: { text } } }],
});
const reply = { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'Done.' } }] };
const end = { text: '' };

describe('MCP OAuth', () => {
  it(
    'connects through the card, calls with the token, refreshes it, and never writes or shows it',
    { timeout: 180_000 },
    async () => {
      server = await startHttpServer('oauth');
      const model = scriptedProvider([
        echo('one'),
        reply,
        end,
        echo('two'),
        reply,
        end,
        echo('three'),
        reply,
        end,
      ]);
      const logged: string[] = [];
      const made = await remoteBox(model, { secure: { url: server.url, allowPrivateHost: true } }, (line) =>
        logged.push(line),
      );
      box = made.box;
      const { agentId, events, prompt } = made;

      // 1. No token yet: the call ends with a model-readable error and the conversation gets the card.
      await prompt('use the secure server');
      expect(lastToolOutputs(model, 1)[0]).toContain(
        'The MCP server secure needs the user to sign in before it can be used. A "Connect secure" card',
      );
      const entries = () =>
        box!.host.entriesAfter(agentId, 0) as Promise<Array<SequencedEntry & Record<string, unknown>>>;
      expect(await entries()).toContainEqual(
        expect.objectContaining({ kind: 'notice', connect: { server: 'secure' } }),
      );

      // 2. The card's button: the authorization URL (PKCE S256, state, the box's own callback).
      const started = await box.call('startMcpConnect', { agentId, server: 'secure' });
      expect(started.status).toBe(200);
      const authorizationUrl = new URL((started.body as { authorizationUrl: string }).authorizationUrl);
      expect(authorizationUrl.origin).toBe(server.control);
      expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(
        new URL('/oauth/mcp/callback', box.gateway.url).href,
      );
      // 3. The user signs in: the authorization server redirects to the box's callback.
      const landed = await fetch(authorizationUrl, { redirect: 'follow' });
      expect(landed.status).toBe(200);
      expect(landed.url).toMatch(/\/oauth\/mcp\/callback\?code=/);
      expect(await landed.text()).toContain('Connected secure');
      expect(await entries()).toContainEqual(
        expect.objectContaining({ kind: 'notice', text: 'Connected secure: your agent can use it now.' }),
      );
      // A callback is used once.
      const replay = await fetch(landed.url);
      expect(replay.status).toBe(400);
      expect(await replay.text()).toContain('unknown, used or older than ten minutes');

      // 4. The call goes through with the token.
      await prompt('again');
      expect(lastToolOutputs(model, 4)).toEqual(['oauth echo: two']);

      // 5. The access token expires: the SDK refreshes it with the refresh token, and the call works.
      await fetch(new URL('/test/expire', server.control), { method: 'POST' });
      await prompt('once more');
      expect(lastToolOutputs(model, 7)).toEqual(['oauth echo: three']);
      const issued = (await (await fetch(new URL('/test/issued', server.control))).json()) as {
        access: string[];
        refresh: string[];
        refreshed: number;
      };
      expect(issued.refreshed).toBe(1);
      const tokens = [...issued.access, ...issued.refresh];
      expect(tokens).toHaveLength(4);

      // 6. No token in any file of the data dir (the store is sealed), any event, log line or model request.
      for (const { file, text } of await everyFile(box.dataDir)) {
        for (const token of tokens) expect(text.includes(token), `${file} holds a token`).toBe(false);
      }
      const seen = JSON.stringify({
        events,
        logged,
        requests: model.requests,
        log: box.requestLog,
        errors: box.errorLog,
      });
      for (const token of tokens) expect(seen).not.toContain(token);
    },
  );

  it(
    'the panel: Test meets the 401 and the row asks for a sign-in; a connect without an agent signs it in, telling no conversation',
    { timeout: 120_000 },
    async () => {
      server = await startHttpServer('oauth');
      const entry = { url: server.url, allowPrivateHost: true };
      const made = await remoteBox(scriptedProvider([]), { secure: entry });
      box = made.box;
      const signIn = async () => {
        const view = (await box!.call('getMcpSettings', {})).body as {
          servers: Array<{ name: string; signIn: string | null }>;
        };
        return view.servers.find((row) => row.name === 'secure')?.signIn;
      };
      expect(await signIn()).toBeNull();

      const tested = await box.call('testMcpServer', { name: 'secure', server: entry });
      expect(tested.body).toMatchObject({ ok: false });
      expect(await signIn()).toBe('sign-in-needed');

      const started = await box.call('startMcpConnect', { server: 'secure' });
      expect(started.status).toBe(200);
      const landed = await fetch((started.body as { authorizationUrl: string }).authorizationUrl);
      expect(landed.url).toMatch(/\/oauth\/mcp\/callback\?code=/);
      expect(await landed.text()).toContain('Connected secure');
      expect(await signIn()).toBe('signed-in');
      // No conversation started it, so none is told.
      const entries = await box.host.entriesAfter(made.agentId, 0);
      expect(
        entries.some(
          (e) => (e as { text?: unknown }).text === 'Connected secure: your agent can use it now.',
        ),
      ).toBe(false);
      // And a Test now lists the tools.
      expect((await box.call('testMcpServer', { name: 'secure', server: entry })).body).toMatchObject({
        ok: true,
      });
    },
  );
});
