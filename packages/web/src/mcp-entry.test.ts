import { describe, expect, it } from 'vitest';
import { emptyForm, entryOf, formOf, FormProblem } from './mcp-entry.ts';

describe('mcp.json entries in the connectors form', () => {
  it('round-trips a stdio entry and keeps the keys the form does not show', () => {
    const entry = {
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-github'],
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: '${secret:GITHUB_TOKEN}', MODE: 'a=b' },
      allowDomains: ['registry.npmjs.org', 'api.github.com'],
      approval: { '*': 'auto', create_issue: 'ask' },
      timeoutMs: 15000,
      futureKey: { kept: true },
    };
    const form = formOf('github', entry);
    expect(form).toMatchObject({
      kind: 'stdio',
      args: '-y\n@modelcontextprotocol/server-github',
      env: 'GITHUB_PERSONAL_ACCESS_TOKEN=${secret:GITHUB_TOKEN}\nMODE=a=b',
      approval: 'per-tool',
      approvalRules: '* = auto\ncreate_issue = ask',
      timeoutSeconds: '15',
    });
    expect(entryOf(form, entry)).toEqual(entry);
  });

  it('builds an HTTP entry, drops the stdio keys when the kind changes, and leaves empty fields out', () => {
    const form = {
      ...formOf('linear', { command: 'old', args: ['x'], env: { A: 'b' }, disabled: true }),
      kind: 'http' as const,
      url: ' https://mcp.linear.app/mcp ',
      headers: 'Authorization: Bearer ${secret:LINEAR}\n\n',
      allowPrivateHost: false,
      approval: 'ask' as const,
      disabled: false,
    };
    expect(entryOf(form, { command: 'old', args: ['x'], env: { A: 'b' }, disabled: true })).toEqual({
      url: 'https://mcp.linear.app/mcp',
      headers: { Authorization: 'Bearer ${secret:LINEAR}' },
      approval: 'ask',
    });
    expect(entryOf({ ...emptyForm('stdio'), command: 'server' })).toEqual({ command: 'server' });
  });

  it('names the field and line of what it cannot read', () => {
    const bad = (patch: Partial<ReturnType<typeof emptyForm>>) => () =>
      entryOf({ ...emptyForm('stdio'), command: 'x', ...patch });
    expect(bad({ env: 'A=1\nnot a pair' })).toThrow(new FormProblem('Environment, line 2: write NAME=value'));
    expect(bad({ approval: 'per-tool', approvalRules: 'delete = maybe' })).toThrow(
      /delete: write "ask" or "auto"/,
    );
    expect(bad({ timeoutSeconds: 'soon' })).toThrow(/Timeout: write a number of seconds/);
  });
});
