/**
 * The launch recipes of docs/mcp-client.md, run confined for real: `npx -y <package>` against an
 * npm registry of the test's own (a loopback HTTP server serving a packument and a tarball built
 * here), reached through the server's egress proxy as its `allowDomains` says; and a server at an
 * absolute host path. The package is a dependency-free MCP server (newline-delimited JSON-RPC on
 * stdio), so the registry serves one tarball; the box's client is the real SDK.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addressKind } from '../net/addresses.ts';
import { hostFixture, lastToolOutputs, type HostFixture } from '../testing/host-fixture.ts';
import { serverHome } from './stdio-launch.ts';

let fx: HostFixture | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const PACKAGE = 'sendbox-recipe-mcp';
const call = (name: string, input: Record<string, unknown>) => ({ toolCalls: [{ name, input }] });
const reply = { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'Done.' } }] };
const end = { text: '' };

/** A whole MCP server in one file: initialize, tools/list, tools/call (`where`), ping. */
const SERVER_JS = `#!/usr/bin/env node
const { createInterface } = require('node:readline');
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\\n');
const tool = { name: 'where', description: 'Where this server runs.', inputSchema: { type: 'object', properties: {} } };
createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, method, params } = JSON.parse(line);
  if (id === undefined) return;
  if (method === 'initialize') {
    send({ id, result: { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'recipe', version: '1.0.0' } } });
  } else if (method === 'tools/list') {
    send({ id, result: { tools: [tool] } });
  } else if (method === 'tools/call') {
    const text = JSON.stringify({ file: __filename, cwd: process.cwd(), uid: process.getuid() });
    send({ id, result: { content: [{ type: 'text', text }] } });
  } else if (method === 'ping') {
    send({ id, result: {} });
  } else {
    send({ id, error: { code: -32601, message: 'no method ' + method } });
  }
});
`;

/** A package folder `<dir>/package` with the server as its bin. */
async function writePackage(dir: string): Promise<string> {
  const root = path.join(dir, 'package');
  await mkdir(path.join(root, 'bin'), { recursive: true });
  await writeFile(
    path.join(root, 'package.json'),
    JSON.stringify({ name: PACKAGE, version: '1.0.0', bin: { [PACKAGE]: 'bin/server.js' } }),
  );
  await writeFile(path.join(root, 'bin', 'server.js'), SERVER_JS);
  await chmod(path.join(root, 'bin', 'server.js'), 0o755);
  return root;
}

/** A registry of one package on 127.0.0.2 (the address outside.test-like names are pointed at). */
async function startRegistry(): Promise<{ port: number; requests: string[] }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-registry-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await writePackage(dir);
  const tgz = path.join(dir, `${PACKAGE}-1.0.0.tgz`);
  const tar = spawnSync('tar', ['-czf', tgz, '-C', dir, 'package'], { encoding: 'utf8' });
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  const tarball = await readFile(tgz);
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const base = `http://registry.test:${(server.address() as { port: number }).port}`;
    if (req.url === `/${PACKAGE}`) {
      res.setHeader('Content-Type', 'application/json');
      res.end(
        JSON.stringify({
          name: PACKAGE,
          'dist-tags': { latest: '1.0.0' },
          versions: {
            '1.0.0': {
              name: PACKAGE,
              version: '1.0.0',
              bin: { [PACKAGE]: 'bin/server.js' },
              dist: {
                tarball: `${base}/${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`,
                integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
                shasum: createHash('sha1').update(tarball).digest('hex'),
              },
            },
          },
        }),
      );
    } else if (req.url === `/${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`) {
      res.setHeader('Content-Type', 'application/octet-stream');
      res.end(tarball);
    } else {
      res.statusCode = 404;
      res.end('{"error":"not found"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as { port: number }).port, requests };
}

/**
 * registry.test plays a public host at 127.0.0.2 (sandboxes never reach this machine, so the box's
 * name resolution is told so, as in the shell's allowlist test); every other name keeps the real rules.
 */
const network = {
  resolve: (host: string) =>
    Promise.resolve([{ address: host === 'registry.test' ? '127.0.0.2' : '127.0.0.1', family: 4 as const }]),
  kindOf: (address: string) => (address === '127.0.0.2' ? 'public' : addressKind(address)),
};

describe('the launch recipes, confined', () => {
  it('npx -y <package>: fetched from the registry through the egress proxy into the server’s home, run as the agent', async () => {
    const registry = await startRegistry();
    fx = await hostFixture([call('mcp', { server: 'npm', toolName: 'where', args: {} }), reply, end], {
      sandbox: { egress: { network } },
    });
    await writeFile(
      path.join(fx.dataDir, 'mcp.json'),
      JSON.stringify({
        mcpServers: {
          npm: {
            command: 'npx',
            args: ['-y', PACKAGE],
            allowDomains: ['registry.test'],
            env: {
              npm_config_registry: `http://registry.test:${registry.port}/`,
              npm_config_update_notifier: 'false',
              npm_config_audit: 'false',
              npm_config_fund: 'false',
            },
            timeoutMs: 120_000,
          },
        },
      }),
    );
    await fx.prompt('where does it run?');
    const [output] = lastToolOutputs(fx.model, 1);
    const where = JSON.parse(output ?? '{}') as { file?: string; cwd?: string; uid?: number };
    const home = serverHome(fx.dataDir, fx.agentId, 'npm');
    // npx installed it under the server's own home (its npm cache), and ran it there as the agent.
    expect(where.file).toMatch(
      new RegExp(`^${home}/\\.npm/_npx/[0-9a-f]+/node_modules/${PACKAGE}/bin/server\\.js$`),
    );
    expect(where.cwd).toBe(fx.sandbox);
    expect(where.uid).not.toBe(process.getuid?.());
    expect(registry.requests).toContain(`/${PACKAGE}`);
    expect(registry.requests).toContain(`/${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`);
    expect((await readdir(path.join(home, '.npm'))).length).toBeGreaterThan(0);
  }, 180_000);

  it('npx -y without the registry in allowDomains cannot install; the box log says why', async () => {
    const registry = await startRegistry();
    const logged: string[] = [];
    fx = await hostFixture([call('mcp', { server: 'npm', toolName: 'where', args: {} }), reply, end], {
      sandbox: { egress: { network } },
      mcp: { log: (line) => logged.push(line) },
    });
    await writeFile(
      path.join(fx.dataDir, 'mcp.json'),
      JSON.stringify({
        mcpServers: {
          npm: {
            command: 'npx',
            args: ['-y', PACKAGE],
            env: {
              npm_config_registry: `http://registry.test:${registry.port}/`,
              npm_config_fetch_retries: '0',
            },
            timeoutMs: 60_000,
          },
        },
      }),
    );
    await fx.prompt('where does it run?');
    expect(lastToolOutputs(fx.model, 1)[0]).toMatch(/The MCP server npm did not start/);
    // No network at all: the name does not even resolve inside the sandbox.
    expect(logged.some((line) => /^mcp npm .*npm error .*registry\.test/.test(line))).toBe(true);
    expect(registry.requests).toEqual([]);
  }, 120_000);

  it('a server at an absolute host path: its install is mounted read-only and runs without readOnly', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-abs-server-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const root = await writePackage(dir);
    // Readable by the agent's uid, as an operator's /srv/mcp/<server> would be.
    await chmod(dir, 0o755);
    const command = path.join(root, 'bin', 'server.js');
    fx = await hostFixture([call('mcp', { server: 'local', toolName: 'where', args: {} }), reply, end]);
    await writeFile(
      path.join(fx.dataDir, 'mcp.json'),
      JSON.stringify({ mcpServers: { local: { command } } }),
    );
    await fx.prompt('where does it run?');
    const where = JSON.parse(lastToolOutputs(fx.model, 1)[0] ?? '{}') as { file?: string; cwd?: string };
    expect(where.file).toBe(command);
    expect(where.cwd).toBe(fx.sandbox);
    expect((await stat(command)).isFile()).toBe(true);
  }, 120_000);
});
