/**
 * Sandbox snapshots (issue 25 §4). An agent's sandbox stays on the disk of the worker holding its
 * lease; that worker snapshots it into the bucket at each turn end, every `intervalMs` while a turn
 * runs, and before it lets the lease go. A worker that takes the agent over restores the latest
 * snapshot before the agent's first tool call there.
 *
 * Both ways are incremental. A snapshot hashes only files whose stat changed (sandbox-tree.ts) and
 * sends only blobs the bucket lacks (those of the last manifest this worker took or restored are
 * known to be there; any other is put with `If-None-Match: *`); an unchanged sandbox gives the same
 * manifest and sends nothing. A restore fetches only files whose hash differs from the local copy,
 * removes what the snapshot does not hold, and keeps modes, links and empty folders. Every path comes
 * from a checked manifest (manifest.ts), and each download is written beside its target, checked,
 * and renamed into a folder whose real path is the one the manifest names: nothing lands outside the
 * sandbox.
 *
 * Old snapshots are pruned after each new one is published (snapshot-store.ts `prune`, off the
 * turn's path: queued behind the snapshot, not awaited by it): the latest KEPT_SNAPSHOTS stay with
 * their blobs. Blobs this worker knew to be in the bucket are then only those the kept manifests
 * use, so a file going back to old bytes is sent again rather than named after a deleted blob.
 *
 * What a dead worker loses: files written since its last snapshot, and its background processes.
 */
import { randomBytes } from 'node:crypto';
import {
  chmod,
  lchown,
  lstat,
  mkdir,
  readdir,
  realpath,
  rename,
  rm,
  symlink,
  utimes,
} from 'node:fs/promises';
import path from 'node:path';
import type { SequencedEntry } from '../../stores/ledger.ts';
import { placeUploads, uploadsAfter, type Placement } from '../../agent/upload-placement.ts';
import { manifestText, parseManifest, sha256Hex, type ManifestEntry } from './manifest.ts';
import { FileHashes, hashFile, readSandboxTree, RESTORE_TEMP_PREFIX } from './sandbox-tree.ts';
import { ChangedWhileSentError, type PruneFigures, type SnapshotStore } from './snapshot-store.ts';

/** A turn's snapshots come this often (ms) unless `SENDBOX_SNAPSHOT_INTERVAL_MS` says otherwise. */
export const DEFAULT_SNAPSHOT_INTERVAL_MS = 60_000;
const PARALLEL_TRANSFERS = 8;
const SEND_ATTEMPTS = 3;
/** The latest snapshots kept (a restore needs the latest; two more cost little and cover a reader of the one before). */
export const KEPT_SNAPSHOTS = 3;

/** `SENDBOX_SNAPSHOT_INTERVAL_MS` (tests lower it), or the default. */
export function snapshotIntervalMs(env: NodeJS.ProcessEnv): number {
  const text = env.SENDBOX_SNAPSHOT_INTERVAL_MS;
  if (text === undefined || text === '') return DEFAULT_SNAPSHOT_INTERVAL_MS;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 100) {
    throw new Error(
      `SENDBOX_SNAPSHOT_INTERVAL_MS=${JSON.stringify(text)} is not a whole number of milliseconds of at least 100; unset it for the default (${DEFAULT_SNAPSHOT_INTERVAL_MS})`,
    );
  }
  return value;
}

export interface SnapshotFigures {
  /** The manifest's SHA-256. */
  manifest: string;
  files: number;
  bytes: number;
  /** Files read to hash them. */
  hashed: number;
  /** Blobs this snapshot created in the bucket, and their bytes. */
  uploaded: number;
  uploadedBytes: number;
  /** Nothing changed since the last snapshot this worker took or restored: nothing was written. */
  unchanged: boolean;
  /** Paths left out (FIFOs, sockets, devices). */
  skipped: string[];
}

export interface RestoreFigures {
  /** The manifest restored (null: the agent has no snapshot yet). */
  manifest: string | null;
  /** The local folder was that snapshot already (this worker took or restored it last). */
  current: boolean;
  fetched: number;
  fetchedBytes: number;
  kept: number;
  removed: number;
}

/** A turn job's hold on an agent's sandbox (`SandboxSnapshots.hold`). */
export interface HeldSandbox {
  /** A turn ended (or stopped to wait for the user): snapshot now. */
  turnEnded(): void;
  /**
   * Stops the timer and takes the last snapshot, before the lease is let go; `superseded`: the lease
   * was lost, so nothing is taken (the fence would refuse it).
   */
  finish(superseded: boolean): Promise<void>;
}

interface AgentState {
  hashes: FileHashes;
  /** Blobs known to be in the bucket. */
  blobs: Set<string>;
  /** The blobs of manifests this worker took or read (those a prune keeps stay). */
  manifestBlobs: Map<string, Set<string>>;
  blobsLoaded: boolean;
  /** The snapshot the local folder was last taken as or restored from. */
  manifest: string | null;
  /** The last ledger seq whose uploads the local folder took in (placed, or restored from a snapshot that had). */
  uploadsSeq: number;
  /** The `uploadsSeq` of the snapshot this worker last published or restored. */
  publishedUploadsSeq: number;
  /** Snapshots and restores of the agent run one at a time. */
  queue: Promise<unknown>;
}

export class SandboxSnapshots {
  private readonly agents = new Map<string, AgentState>();

  constructor(
    private readonly store: SnapshotStore,
    /** The agent's sandbox folder on this worker. */
    private readonly sandboxOf: (agentId: string) => string,
    readonly intervalMs = DEFAULT_SNAPSHOT_INTERVAL_MS,
  ) {}

  /** Snapshots the agent's sandbox under the lease `epoch` (a SupersededError once it is taken over). */
  take(agentId: string, epoch: number): Promise<SnapshotFigures> {
    return this.serially(agentId, (state) => this.takeNow(agentId, epoch, state));
  }

  /** Makes the agent's sandbox here its latest snapshot (nothing when it has none, or is it already). */
  restore(agentId: string): Promise<RestoreFigures> {
    return this.serially(agentId, (state) => this.restoreNow(agentId, state));
  }

  /**
   * Before a turn: places into the agent's sandbox here the uploads `entries` (its ledger) records
   * after the ones its folder took in already (agent/upload-placement.ts), from `copyOf` (the local
   * attachment copy, fetched when missing). An upload placed once is never placed again, so one a
   * later turn deleted or replaced stays so. A failed upload is tried again before the next turn.
   */
  placeUploads(
    agentId: string,
    entries: readonly SequencedEntry[],
    copyOf: (sha256: string) => Promise<string | null>,
  ): Promise<Placement> {
    // No upload after the last placed one (restore sets it before the turns): nothing to place, and
    // the turn need not wait for the last turn's snapshot to be sent (each turn's handoff did).
    if (uploadsAfter(entries, this.stateOf(agentId).uploadsSeq).length === 0)
      return Promise.resolve({ placed: [], present: [], failed: [] });
    return this.serially(agentId, async (state) => {
      const placement = await placeUploads(
        this.sandboxOf(agentId),
        uploadsAfter(entries, state.uploadsSeq),
        copyOf,
      );
      const firstFailed = placement.failed[0]?.upload.seq;
      const last = entries.at(-1)?.seq ?? 0;
      state.uploadsSeq = Math.max(state.uploadsSeq, firstFailed === undefined ? last : firstFailed - 1);
      return placement;
    });
  }

  /**
   * While a turn job holds the agent's lease: a snapshot every `intervalMs` and at each `turnEnded`
   * (one at a time; a request during a snapshot makes one more after it). Their failures go to
   * `report`; the job goes on (the next snapshot tries again).
   */
  hold(agentId: string, epoch: number, report: (error: unknown) => void): HeldSandbox {
    let running: Promise<void> | null = null;
    let again = false;
    let stopped = false;
    const request = (): void => {
      if (stopped) return;
      if (running) {
        again = true;
        return;
      }
      running = this.take(agentId, epoch)
        .then((figures) => this.pruneAfter(figures, agentId, epoch, report), report)
        .finally(() => {
          running = null;
          if (again) {
            again = false;
            request();
          }
        });
    };
    const timer = setInterval(request, this.intervalMs);
    timer.unref();
    return {
      turnEnded: request,
      finish: async (superseded) => {
        stopped = true;
        clearInterval(timer);
        while (running) await running;
        if (!superseded) this.pruneAfter(await this.take(agentId, epoch), agentId, epoch, report);
      },
    };
  }

  /**
   * Deletes the agent's snapshots older than the latest KEPT_SNAPSHOTS and the blobs only they used
   * (snapshot-store.ts `prune`), under the lease `epoch`.
   */
  prune(agentId: string, epoch: number): Promise<PruneFigures> {
    return this.serially(agentId, async (state) => {
      const figures = await this.store.prune(agentId, epoch, KEPT_SNAPSHOTS, async (manifests) => {
        const blobs = new Set<string>();
        for (const manifest of manifests) {
          for (const blob of await this.blobsOfManifest(agentId, manifest, state)) blobs.add(blob);
        }
        return blobs;
      });
      if (figures.kept.length > 0) {
        // Only what the kept manifests use is still known to be there.
        state.blobs = new Set(figures.referenced);
        for (const manifest of state.manifestBlobs.keys())
          if (!figures.kept.includes(manifest)) state.manifestBlobs.delete(manifest);
      }
      return figures;
    });
  }

  /** Resolves once every snapshot, restore and prune queued here has ended (before the worker closes). */
  async settled(): Promise<void> {
    await Promise.all([...this.agents.values()].map((state) => state.queue));
  }

  /** A new snapshot was published: prune behind it (not awaited; its failure goes to `report`). */
  private pruneAfter(
    figures: SnapshotFigures,
    agentId: string,
    epoch: number,
    report: (error: unknown) => void,
  ): void {
    if (!figures.unchanged) void this.prune(agentId, epoch).catch(report);
  }

  private async blobsOfManifest(agentId: string, manifest: string, state: AgentState): Promise<Set<string>> {
    let blobs = state.manifestBlobs.get(manifest);
    if (!blobs) {
      const key = this.store.manifestKey(agentId, manifest);
      blobs = fileBlobs(parseManifest(await this.store.getManifest(agentId, manifest), agentId, key).entries);
      state.manifestBlobs.set(manifest, blobs);
    }
    return blobs;
  }

  private stateOf(agentId: string): AgentState {
    let state = this.agents.get(agentId);
    if (!state) {
      state = {
        hashes: new FileHashes(),
        blobs: new Set(),
        manifestBlobs: new Map(),
        blobsLoaded: false,
        manifest: null,
        uploadsSeq: 0,
        publishedUploadsSeq: 0,
        queue: Promise.resolve(),
      };
      this.agents.set(agentId, state);
    }
    return state;
  }

  private serially<T>(agentId: string, run: (state: AgentState) => Promise<T>): Promise<T> {
    const state = this.stateOf(agentId);
    const result = state.queue.then(() => run(state));
    state.queue = result.catch(() => undefined);
    return result;
  }

  private async takeNow(agentId: string, epoch: number, state: AgentState): Promise<SnapshotFigures> {
    const root = this.sandboxOf(agentId);
    await mkdir(root, { recursive: true, mode: 0o700 });
    if (!state.blobsLoaded) await this.learnBlobs(agentId, state);
    // The uploads the folder holds before it is read: what this snapshot covers.
    const uploadsSeq = state.uploadsSeq;
    const tree = await readSandboxTree(root, state.hashes);
    const figures: SnapshotFigures = {
      manifest: '',
      files: 0,
      bytes: 0,
      hashed: tree.hashed,
      uploaded: 0,
      uploadedBytes: 0,
      unchanged: false,
      skipped: tree.skipped,
    };
    const gone = new Set<string>();
    const missing = tree.entries.filter(
      (entry): entry is Extract<ManifestEntry, { type: 'file' }> =>
        entry.type === 'file' && !state.blobs.has(entry.sha256),
    );
    await inParallel(missing, async (entry) => {
      const file = path.join(root, entry.path);
      for (let attempt = 1; ; attempt++) {
        try {
          const sent = await this.store.putBlob(agentId, file, entry);
          // A small file changed since the walk: the manifest names what was sent.
          entry.sha256 = sent.sha256;
          entry.size = sent.size;
          state.blobs.add(sent.sha256);
          if (sent.created) {
            figures.uploaded += 1;
            figures.uploadedBytes += sent.size;
          }
          return;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT' || code === 'ELOOP') {
            gone.add(entry.path); // removed (or replaced by a link) since the walk
            return;
          }
          if (!(error instanceof ChangedWhileSentError) || attempt === SEND_ATTEMPTS) throw error;
          const again = await hashFile(file);
          entry.sha256 = again.sha256;
          entry.size = Number(again.info.size);
        }
      }
    });
    const entries = gone.size === 0 ? tree.entries : tree.entries.filter((entry) => !gone.has(entry.path));
    for (const entry of entries) {
      if (entry.type !== 'file') continue;
      figures.files += 1;
      figures.bytes += entry.size;
    }
    const text = manifestText({ agentId, entries });
    figures.manifest = sha256Hex(text);
    if (figures.manifest === state.manifest && uploadsSeq === state.publishedUploadsSeq) {
      figures.unchanged = true;
      return figures;
    }
    const manifest = await this.store.putManifest(agentId, text);
    await this.store.publish(agentId, {
      manifest,
      epoch,
      takenAt: Date.now(),
      files: figures.files,
      bytes: figures.bytes,
      uploadsSeq,
    });
    state.manifest = manifest;
    state.publishedUploadsSeq = uploadsSeq;
    state.manifestBlobs.set(manifest, fileBlobs(entries));
    return figures;
  }

  /** The blobs of the agent's latest snapshot are in the bucket: a worker new to the agent need not send them. */
  private async learnBlobs(agentId: string, state: AgentState): Promise<void> {
    const latest = await this.store.latest(agentId);
    if (latest) {
      try {
        const manifest = parseManifest(
          await this.store.getManifest(agentId, latest.manifest),
          agentId,
          this.store.manifestKey(agentId, latest.manifest),
        );
        for (const entry of manifest.entries) if (entry.type === 'file') state.blobs.add(entry.sha256);
      } catch {
        // Unreadable: each blob is put with If-None-Match, which costs a request per file, no more.
      }
    }
    state.blobsLoaded = true;
  }

  private async restoreNow(agentId: string, state: AgentState): Promise<RestoreFigures> {
    const figures: RestoreFigures = {
      manifest: null,
      current: false,
      fetched: 0,
      fetchedBytes: 0,
      kept: 0,
      removed: 0,
    };
    const latest = await this.store.latest(agentId);
    if (!latest) return figures;
    figures.manifest = latest.manifest;
    if (state.manifest === latest.manifest) {
      // This worker took it last: its folder may have taken in more uploads since.
      state.uploadsSeq = Math.max(state.uploadsSeq, latest.uploadsSeq);
      // Another worker may have pruned meanwhile: only this manifest's blobs are sure to be there.
      const blobs = state.manifestBlobs.get(latest.manifest);
      state.blobs = new Set(blobs);
      state.blobsLoaded = blobs !== undefined;
      figures.current = true;
      return figures;
    }
    const key = this.store.manifestKey(agentId, latest.manifest);
    // Checked whole before the first change to the folder.
    const manifest = parseManifest(await this.store.getManifest(agentId, latest.manifest), agentId, key);
    const root = this.sandboxOf(agentId);
    await mkdir(root, { recursive: true, mode: 0o700 });
    for (const name of await readdir(root)) {
      if (name.startsWith(RESTORE_TEMP_PREFIX)) await rm(path.join(root, name), { force: true });
    }
    const realRoot = await realpath(root);
    const own = await ownerOf(root);
    const local = await readSandboxTree(root, state.hashes);
    const wanted = new Map(manifest.entries.map((entry) => [entry.path, entry]));
    const have = new Map<string, ManifestEntry>();
    // What the snapshot does not hold, or holds as another kind of thing, goes (deepest first).
    for (const entry of [...local.entries].reverse()) {
      const want = wanted.get(entry.path);
      const keep =
        want !== undefined &&
        want.type === entry.type &&
        (want.type !== 'symlink' || (entry.type === 'symlink' && want.target === entry.target));
      if (keep) {
        have.set(entry.path, entry);
        continue;
      }
      await rm(path.join(root, entry.path), { recursive: true, force: true });
      figures.removed += 1;
    }
    for (const rel of local.skipped) {
      await rm(path.join(root, rel), { recursive: true, force: true });
      figures.removed += 1;
    }
    const checkedDirs = new Set<string>(['']);
    const intoFolder = async (rel: string): Promise<string> => {
      const parent = path.posix.dirname(rel) === '.' ? '' : path.posix.dirname(rel);
      if (!checkedDirs.has(parent)) {
        const real = await realpath(path.join(root, parent));
        if (real !== path.join(realRoot, parent) || !(await lstat(real)).isDirectory()) {
          throw new Error(
            `restoring ${rel}: its folder is not inside the sandbox ${root} (${real}); nothing more was restored`,
          );
        }
        checkedDirs.add(parent);
      }
      return path.join(root, rel);
    };
    for (const entry of manifest.entries) {
      if (entry.type !== 'dir' || have.has(entry.path)) continue;
      const dir = await intoFolder(entry.path);
      await mkdir(dir, { mode: 0o700 });
      await own(dir);
    }
    const files = manifest.entries.filter(
      (entry): entry is Extract<ManifestEntry, { type: 'file' }> => entry.type === 'file',
    );
    await inParallel(files, async (entry) => {
      const target = await intoFolder(entry.path);
      // Seconds as a double: half a millisecond over, so the whole milliseconds read back are the manifest's.
      const mtime = (entry.mtimeMs + 0.5) / 1000;
      const local = have.get(entry.path);
      if (local?.type === 'file' && local.sha256 === entry.sha256) {
        if (local.mode !== entry.mode) await chmod(target, entry.mode);
        if (local.mtimeMs !== entry.mtimeMs) await utimes(target, mtime, mtime);
        figures.kept += 1;
      } else {
        const temp = path.join(root, `${RESTORE_TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
        await this.store.getBlob(agentId, entry.sha256, temp);
        await own(temp);
        await chmod(temp, entry.mode);
        await utimes(temp, mtime, mtime);
        await rename(temp, target);
        figures.fetched += 1;
        figures.fetchedBytes += entry.size;
      }
      state.hashes.remember(entry.path, await lstat(target, { bigint: true }), entry.sha256);
    });
    for (const entry of manifest.entries) {
      if (entry.type !== 'symlink' || have.has(entry.path)) continue;
      const link = await intoFolder(entry.path);
      await symlink(entry.target, link);
      await own(link);
    }
    // Folder modes last, deepest first: a read-only folder is filled before it is closed.
    for (const entry of [...manifest.entries].reverse()) {
      if (entry.type !== 'dir') continue;
      const local = have.get(entry.path);
      if (local?.type === 'dir' && local.mode === entry.mode) continue;
      await chmod(path.join(root, entry.path), entry.mode);
    }
    state.manifest = latest.manifest;
    state.uploadsSeq = latest.uploadsSeq;
    state.publishedUploadsSeq = latest.uploadsSeq;
    state.blobs = fileBlobs(files);
    state.manifestBlobs.set(latest.manifest, new Set(state.blobs));
    state.blobsLoaded = true;
    return figures;
  }
}

/**
 * What a restore writes is given the sandbox folder's owner. As root, a sandbox the box prepared
 * already belongs to the agent's uid (sandbox/sandbox-uids.ts hands a folder over only when its
 * owner is not that uid yet), and the agent's tools run as that uid: a file restored as root would
 * be one they cannot write (an `echo >> log.txt` after the agent moved: "Permission denied").
 * Not as root, everything is the box's own uid already.
 */
async function ownerOf(root: string): Promise<(file: string) => Promise<void>> {
  if (process.getuid?.() !== 0) return () => Promise.resolve();
  const { uid, gid } = await lstat(root);
  if (uid === 0 && gid === 0) return () => Promise.resolve();
  return (file) => lchown(file, uid, gid);
}

/** The blobs a manifest's files use. */
function fileBlobs(entries: readonly ManifestEntry[]): Set<string> {
  return new Set(entries.flatMap((entry) => (entry.type === 'file' ? [entry.sha256] : [])));
}

/** Runs `work` on every item, at most PARALLEL_TRANSFERS at a time; the first failure is raised once all settled. */
async function inParallel<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        failures.push(error);
        next = items.length;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_TRANSFERS, items.length) }, lane));
  if (failures.length > 0) throw failures[0];
}
