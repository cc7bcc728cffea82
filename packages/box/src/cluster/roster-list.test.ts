/**
 * listAgents on a cluster gateway, over a real PostgreSQL and Ceph RGW: agents made and changed
 * through another worker are listed as their rows say, and a list reads one query of marks (each
 * agent's profile version, last ledger seq, last transcript seq) and refreshes only the agents whose
 * mark moved. Before, every list refreshed every agent: three round trips each on the worker's
 * synchronous connection, counted here.
 */
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { scriptedProvider } from '../providers/scripted.ts';
import { s3ClientFor } from '../stores/postgres/attachments.ts';
import { useServices } from '../stores/postgres/backend.ts';
import { parseObjectStoreUrl } from '../stores/postgres/object-store-url.ts';
import { removeObjects } from '../testing/bucket.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import { agentPaths } from '../stores/files/layout.ts';

const services = useServices();
const masterKey = randomBytes(32);

describe('listAgents on a cluster gateway', () => {
  const kit = useClusterKit(services);

  it('refreshes only the agents whose rows moved since its last list', async () => {
    const schema = kit.schemaName();
    const start = (name: string) =>
      kit.startWorker({
        dataDirName: name,
        schema,
        masterKey,
        provider: scriptedProvider(() => ({ error: new Error('this worker runs no turn') })),
        workerName: name,
        takeTurns: false,
      });
    const { worker: maker } = await start('maker');
    const { worker: lister } = await start('lister');
    const location = parseObjectStoreUrl(services().objectStoreUrl);
    const ids: string[] = [];
    kit.deferLast(async () => {
      const s3 = s3ClientFor(location, services().credentials);
      for (const id of ids) await removeObjects(s3, location.bucket, `${id}/`);
      s3.destroy();
    });
    const upload = (agentId: string, fileName: string) =>
      maker.host.uploadFile({ agentId, fileName, bytes: new TextEncoder().encode(fileName) });
    for (let i = 0; i < 10; i++) {
      const agent = await maker.host.createAgent({ name: `Agent ${i}` });
      ids.push(agent.id);
      await upload(agent.id, `first-${i}.txt`);
    }
    const first = await lister.host.listAgents();
    expect(first.map((row) => row.lastEntry?.text).sort()).toEqual(
      ids.map((_, i) => `first-${i}.txt`).sort(),
    );
    // A gateway whose turns run on workers runs no tool: listing claims no sandbox uid (as root, a
    // claim is a registry transaction and a chown of the folder, 40 % of a first list's CPU).
    for (const id of ids)
      expect((await stat(agentPaths(lister.host.dataDir, id).sandbox)).uid).toBe(process.getuid!());

    // Count what the lister asks on its synchronous connection (the sessions' reads).
    const sync = lister.db.sync();
    const query = sync.query.bind(sync);
    let asked = 0;
    sync.query = (text, values) => {
      asked++;
      return query(text, values);
    };
    expect(await lister.host.listAgents()).toEqual(first);
    expect(asked).toBe(0);

    // One agent gets an upload and another a new name, through the other worker: those two are read.
    await upload(ids[3]!, 'second.txt');
    await maker.host.updateAgent(ids[5]!, { name: 'Renamed' });
    const third = await lister.host.listAgents();
    const row = (id: string) => third.find((listed) => listed.id === id)!;
    expect(row(ids[3]!).lastEntry).toEqual({ kind: 'user-attachment', text: 'second.txt' });
    expect(row(ids[5]!).name).toBe('Renamed');
    expect(third.filter((listed) => ![ids[3], ids[5]].includes(listed.id))).toEqual(
      first.filter((listed) => ![ids[3], ids[5]].includes(listed.id)),
    );
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThanOrEqual(12);

    // Unread state moves with no new row: another writer counts unread entries, and opening the
    // agent through the other gateway reads them. The list follows both.
    await maker.db.pool.query(
      `UPDATE ${maker.db.table('ledger_kv')} SET value = $2 WHERE agent_id = $1 AND key = 'unreadState'`,
      [
        ids[7],
        JSON.stringify({ lastActivityAt: 1, lastViewedAt: 0, isManuallyUnread: false, unreadCount: 3 }),
      ],
    );
    const unread = (await lister.host.listAgents()).find((listed) => listed.id === ids[7])!;
    expect([unread.unreadCount, unread.hasUnread]).toEqual([3, true]);
    await maker.host.openAgent(ids[7]!);
    const read = (await lister.host.listAgents()).find((listed) => listed.id === ids[7])!;
    expect([read.unreadCount, read.hasUnread]).toEqual([0, false]);
  }, 60_000);
});
