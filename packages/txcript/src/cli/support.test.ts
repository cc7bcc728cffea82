import { describe, expect, it } from 'vitest';
import type { Harness, SessionSummary } from '../harness/types.ts';
import { colorsEnabled } from './colors.ts';
import { CliError, formatError } from './errors.ts';
import { formatJson, orderSessions } from './list.ts';
import { createProgress } from './progress.ts';
import { type FoundSession, resolveSession } from './sessions.ts';
import { parseWhen } from './when.ts';

const harness = (id: string): Harness => ({ id, aliases: [] }) as unknown as Harness;
const found = (summary: Partial<SessionSummary> & { id: string }, h = 'grok_bot'): FoundSession => ({
  summary: { harness: h, locator: `/data/${summary.id}`, ...summary },
  harness: harness(h),
});

describe('parseWhen', () => {
  const now = new Date('2026-09-10T12:00:00Z');
  it('reads ages, RFC 3339 and bare dates', () => {
    expect(parseWhen('2h', '--since', now).toISOString()).toBe('2026-09-10T10:00:00.000Z');
    expect(parseWhen('3d', '--since', now).toISOString()).toBe('2026-09-07T12:00:00.000Z');
    expect(parseWhen('2026-09-01T00:00:00+02:00', '--until', now).toISOString()).toBe(
      '2026-08-31T22:00:00.000Z',
    );
    const day = parseWhen('2026-09-01', '--until', now);
    expect([day.getDate(), day.getHours(), day.getMinutes()]).toEqual([1, 23, 59]);
    expect(parseWhen('2026-09-01', '--since', now).getHours()).toBe(0);
  });
  it('refuses anything else as a usage error naming the option', () => {
    expect(() => parseWhen('yesterday', '--since', now)).toThrow(CliError);
    expect(() => parseWhen('2026-02-30', '--until', now)).toThrow('--until "2026-02-30" is not a time');
  });
});

describe('colorsEnabled', () => {
  it('honours NO_COLOR over everything, then FORCE_COLOR, then the terminal', () => {
    expect(colorsEnabled({}, true)).toBe(true);
    expect(colorsEnabled({}, false)).toBe(false);
    expect(colorsEnabled({ NO_COLOR: '1' }, true)).toBe(false);
    expect(colorsEnabled({ NO_COLOR: '1', FORCE_COLOR: '1' }, true)).toBe(false);
    expect(colorsEnabled({ NO_COLOR: '' }, true)).toBe(true);
    expect(colorsEnabled({ FORCE_COLOR: '1' }, false)).toBe(true);
    expect(colorsEnabled({ FORCE_COLOR: '0' }, true)).toBe(true);
    expect(colorsEnabled({ TERM: 'dumb' }, true)).toBe(false);
  });
});

describe('formatError', () => {
  it('writes what, where and what to do on one line, details indented', () => {
    expect(formatError({ what: 'bad\nthing', where: 'a.json:3', todo: 'fix it', details: ['x'] })).toBe(
      'txcript: bad thing (a.json:3) — fix it\n  x\n',
    );
  });
});

describe('createProgress', () => {
  function stream(isTTY: boolean) {
    const chunks: string[] = [];
    return { chunks, write: (s: string) => chunks.push(s), isTTY };
  }
  it('stays quiet before the delay, then shows the summed count', () => {
    let t = 0;
    const s = stream(false);
    const p = createProgress({ stream: s, delayMs: 1000, label: 'scanning', now: () => t });
    p.update('a', 1, 10);
    t = 999;
    p.update('b', 1, 5);
    expect(s.chunks).toEqual([]);
    t = 1000;
    p.update('a', 4, 10);
    t = 1500;
    p.update('a', 6, 10); // throttled: at most a line a second off a terminal
    t = 2000;
    p.update('a', 8, 10);
    p.finish();
    expect(s.chunks).toEqual(['scanning 5/15\n', 'scanning 9/15\n']);
  });
  it('rewrites one line on a terminal and erases it at the end', () => {
    let t = 0;
    const s = stream(true);
    const p = createProgress({ stream: s, delayMs: 0, label: 'scanning', now: () => t });
    p.update('a', 1, 2);
    t = 200;
    p.update('a', 2, 2);
    p.finish();
    p.finish();
    expect(s.chunks).toEqual(['\r\u001b[Kscanning 1/2', '\r\u001b[Kscanning 2/2', '\r\u001b[K']);
  });
});

describe('orderSessions', () => {
  const sessions = [
    found({ id: 'old', lastActivity: '2026-09-01T00:00:00Z', title: 'Old' }),
    found({ id: 'parent', lastActivity: '2026-09-05T00:00:00Z', messageCount: 3 }),
    found({ id: 'child', lastActivity: '2026-09-09T00:00:00Z', parentId: 'parent' }),
    found({ id: 'undated' }),
    found({ id: 'orphan', lastActivity: '2026-09-06T00:00:00Z', parentId: 'missing' }),
  ];
  it('lists newest first, undated last, subagents right under their parent', () => {
    expect(orderSessions(sessions).map((r) => [r.row.id, r.depth])).toEqual([
      ['parent', 0],
      ['child', 1],
      ['orphan', 0],
      ['old', 0],
      ['undated', 0],
    ]);
  });
  it('limits to the newest N and filters by time, dropping undated sessions', () => {
    expect(orderSessions(sessions, { limit: 2 }).map((r) => r.row.id)).toEqual(['child', 'orphan']);
    const since = new Date('2026-09-04T00:00:00Z');
    expect(orderSessions(sessions, { since }).map((r) => r.row.id)).toEqual(['parent', 'child', 'orphan']);
    const until = new Date('2026-09-05T00:00:00Z');
    expect(orderSessions(sessions, { until }).map((r) => r.row.id)).toEqual(['parent', 'old']);
  });
  it('writes the documented JSON fields, null when unknown', () => {
    const json = JSON.parse(formatJson(orderSessions(sessions).slice(0, 2))) as unknown;
    expect(json).toEqual([
      {
        id: 'parent',
        harness: 'grok_bot',
        title: null,
        messages: 3,
        last_activity: '2026-09-05T00:00:00Z',
        parent: null,
        locator: '/data/parent',
      },
      {
        id: 'child',
        harness: 'grok_bot',
        title: null,
        messages: null,
        last_activity: '2026-09-09T00:00:00Z',
        parent: 'parent',
        locator: '/data/child',
      },
    ]);
  });
});

describe('resolveSession', () => {
  const sessions = [
    found({ id: 'abc123', title: 'Release notes' }),
    found({ id: 'abd456', title: 'abc123x' }),
    found({ id: 'zzz', title: 'Release' }),
    found({ id: 'zzz', title: 'Other' }, 'simple'),
  ];
  it('matches an exact id, then an exact title, then a unique prefix', () => {
    expect(resolveSession('abc123', sessions).summary.id).toBe('abc123');
    expect(resolveSession('Release', sessions).summary.id).toBe('zzz');
    expect(resolveSession('abd', sessions).summary.id).toBe('abd456');
    expect(resolveSession('abc123x', sessions).summary.id).toBe('abd456');
  });
  it('refuses an ambiguous prefix as a usage error listing the candidates', () => {
    try {
      resolveSession('ab', sessions);
      expect.unreachable();
    } catch (err) {
      const e = err as CliError;
      expect(e.exitCode).toBe(2);
      expect(e.message).toBe('"ab" is a prefix of 2 sessions');
      expect(e.details).toEqual(['abc123  grok_bot  "Release notes"', 'abd456  grok_bot  "abc123x"']);
    }
  });
  it('asks for --from when one id exists in two harnesses', () => {
    expect(() => resolveSession('zzz', sessions)).toThrow('"zzz" is the id of 2 sessions');
  });
  it('says how to find ids when nothing matches', () => {
    try {
      resolveSession('nope', sessions);
      expect.unreachable();
    } catch (err) {
      const e = err as CliError;
      expect(e.exitCode).toBe(1);
      expect(e.todo).toBe('run "txcript list" to see session ids and titles');
    }
  });
});

describe('the harness registry', () => {
  it('finds harnesses by id and alias, ignoring case and - versus _', async () => {
    const { findHarness } = await import('../harness/registry.ts');
    for (const name of ['grok_bot', 'grok-bot', 'grokbot', 'grok_desktop', 'grok-desktop', 'Grok-Bot']) {
      expect(findHarness(name).id).toBe('grok_bot');
    }
    expect(findHarness('simple').id).toBe('simple');
  });
  it('names the known ids when a name is unknown', async () => {
    const { findHarness, harnesses, UnknownHarnessError } = await import('../harness/registry.ts');
    expect(() => findHarness('grok-desktop-app')).toThrow(UnknownHarnessError);
    expect(() => findHarness('grok-desktop-app')).toThrow(
      `unknown harness "grok-desktop-app"; known harnesses: ${harnesses.map((h) => h.id).join(', ')}`,
    );
    expect(harnesses.map((h) => h.id)).toEqual(expect.arrayContaining(['grok_bot', 'simple']));
  });
});

describe('the harness catalog', () => {
  it('loads the one harness a name picks, by id or alias', async () => {
    const { loadHarness } = await import('../harness/catalog.ts');
    expect((await loadHarness('cc')).id).toBe('claude_code');
    expect((await loadHarness('Codex-CLI')).id).toBe('codex');
    expect((await loadHarness('simple')).id).toBe('simple');
  });

  it('lists the same harnesses as the registry, and names them when a name is unknown', async () => {
    const { harnessCatalog, loadHarness, UnknownHarnessError } = await import('../harness/catalog.ts');
    const { harnesses } = await import('../harness/registry.ts');
    expect(harnessCatalog.map((h) => h.id)).toEqual(harnesses.map((h) => h.id));
    for (const entry of harnessCatalog) expect((await entry.load()).aliases).toEqual(entry.aliases);
    const refused = loadHarness('grok-desktop-app');
    await expect(refused).rejects.toBeInstanceOf(UnknownHarnessError);
    await expect(refused).rejects.toThrow(
      `unknown harness "grok-desktop-app"; known harnesses: ${harnesses.map((h) => h.id).join(', ')}`,
    );
  });
});
