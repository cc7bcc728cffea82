/**
 * A box claiming uids (tests only): it opens the registry as a box does and
 * assigns a uid to each folder, all at once from `startAt` (epoch ms, so that
 * two claimers start together), then prints the uids as JSON.
 * Two of these on one registry are two boxes of one machine allocating
 * together. Run with `node --import tsx`.
 *
 *   uid-claimer.ts '{"range": {"first": 1990000000, "count": 64, "source": "test"}, "registry": "/tmp/x/uids.db", "folders": ["/tmp/x/a"], "startAt": 0}'
 */
import { SandboxUids, type UidRange } from '../sandbox/sandbox-uids.ts';

const { range, registry, folders, startAt } = JSON.parse(process.argv[2] ?? '{}') as {
  range: UidRange;
  registry: string;
  folders: string[];
  startAt: number;
};
const uids = SandboxUids.open(range, registry);
while (Date.now() < startAt); // busy: both claimers leave this loop in the same millisecond
try {
  console.log(JSON.stringify(await Promise.all(folders.map((folder) => uids.assign(folder)))));
} finally {
  uids.close();
}
