import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configuredApproval, McpConfigFile, parseMcpConfig, resolveSecrets, secretNames } from './config.ts';

describe('mcp.json', () => {
  it('reads stdio, HTTP and builtin servers in the shared mcpServers shape, with sendbox keys', () => {
    const { servers, problems } = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          github: {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-github'],
            env: { GITHUB_TOKEN: '${secret:GH}' },
            allowDomains: ['registry.npmjs.org', 'api.github.com'],
            approval: { '*': 'auto', create_issue: 'ask' },
          },
          linear: {
            url: 'https://mcp.linear.app/mcp',
            headers: { Authorization: 'Bearer ${secret:LINEAR}' },
            approval: 'ask',
            timeoutMs: 5000,
          },
          sessions: { builtin: 'sessions' },
          off: { command: '/opt/x', disabled: true },
        },
      }),
      'mcp.json',
    );
    expect(problems).toEqual([]);
    expect([...servers.keys()]).toEqual(['github', 'linear', 'sessions', 'off']);
    const github = servers.get('github')!;
    expect(github).toMatchObject({ kind: 'stdio', command: 'npx', readOnly: [] });
    expect(configuredApproval(github, 'create_issue')).toBe('ask');
    expect(configuredApproval(github, 'list_issues')).toBe('auto');
    expect(configuredApproval(servers.get('linear')!, 'anything')).toBe('ask');
    expect(configuredApproval(servers.get('sessions')!, 'search_sessions')).toBe('auto');
    expect(secretNames(github)).toEqual(['GH']);
    expect(secretNames(servers.get('linear')!)).toEqual(['LINEAR']);
    expect(servers.get('off')).toMatchObject({ disabled: true });
  });

  it('names the file, the server and the field of each problem, and keeps the valid servers', () => {
    const { servers, problems } = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          good: { command: 'node' },
          typo: { command: 'node', timeoutMS: 5 },
          badUrl: { url: 'ftp://x' },
          badApproval: { command: 'x', approval: 'sometimes' },
          'bad name!': { command: 'x' },
        },
      }),
      '/data/mcp.json',
    );
    expect([...servers.keys()]).toEqual(['good']);
    expect(problems).toEqual([
      expect.stringMatching(/^\/data\/mcp\.json: server "typo": field timeoutMS: /),
      expect.stringMatching(/^\/data\/mcp\.json: server "badUrl": field url: url must be an http/),
      expect.stringMatching(
        /^\/data\/mcp\.json: server "badApproval": field approval: approval is "auto", "ask"/,
      ),
      expect.stringMatching(/^\/data\/mcp\.json: server "bad name!": a name is letters/),
    ]);
    expect(parseMcpConfig('{"mcpServers": ', 'f.json').problems).toEqual([
      expect.stringMatching(/^f\.json: not valid JSON/),
    ]);
    expect(parseMcpConfig('[]', 'f.json').problems).toEqual([
      expect.stringContaining('expected {"mcpServers"'),
    ]);
  });

  it('fills secrets, or names the missing ones', () => {
    const secrets = new Map([['A', 'alpha']]);
    expect(resolveSecrets({ X: 'pre-${secret:A}', Y: 'plain' }, secrets)).toEqual({
      values: { X: 'pre-alpha', Y: 'plain' },
    });
    expect(resolveSecrets({ X: '${secret:A}${secret:B}' }, secrets)).toEqual({ missing: ['B'] });
  });

  it('is read again when it changes, and one server is set or removed keeping the rest of the file', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mcp-config-'));
    try {
      const problems: string[][] = [];
      const file = new McpConfigFile(dir, (p) => problems.push([...p]));
      expect((await file.current()).servers.size).toBe(0);
      await writeFile(
        path.join(dir, 'mcp.json'),
        JSON.stringify({ other: 1, mcpServers: { a: { command: 'x', custom: 1 } } }),
      );
      expect((await file.current()).problems).toHaveLength(1);
      expect(problems).toHaveLength(1);
      await expect(file.setServer('b', { url: 'nope' })).rejects.toThrow(/server "b": field url/);
      await file.setServer('b', { url: 'https://example.com/mcp' });
      const written = JSON.parse(await readFile(path.join(dir, 'mcp.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(written).toEqual({
        other: 1,
        mcpServers: { a: { command: 'x', custom: 1 }, b: { url: 'https://example.com/mcp' } },
      });
      await file.setServer('a', undefined);
      const now = await file.current();
      expect([...now.servers.keys()]).toEqual(['b']);
      expect(now.problems).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
