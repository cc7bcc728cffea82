/**
 * The sidebar's search over the box's own files, with a real host: a new agent (a profile and an
 * empty ledger, no transcript yet) is an empty session that the index takes in quietly, and found
 * by its name; what its agents said is found once written.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createAgentHost, type LocalAgentHost } from '../host/agent-host.ts';
import { MessageSearch } from './message-search.ts';

let dataDir: string;
let host: LocalAgentHost;
let search: MessageSearch;
let log: string[];

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'sendbox-search-'));
  host = await createAgentHost({ dataDir, env: {} });
  log = [];
  search = new MessageSearch({ dataDir, log: (line) => log.push(line) });
});

afterEach(async () => {
  await search.close();
  await host.close();
  await rm(dataDir, { recursive: true, force: true });
});

it('indexes a new agent with an empty ledger as an empty session: no warning, found by its name', async () => {
  const created = await host.createAgent({ name: 'Quartz planner' });
  const hits = await search.search('quartz');
  expect(log).toEqual([]);
  expect(hits).toEqual([
    expect.objectContaining({ agentId: created.id, title: 'Quartz planner', message: 0, kind: 'title' }),
  ]);
});
