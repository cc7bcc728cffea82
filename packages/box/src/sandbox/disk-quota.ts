/**
 * A disk quota per sandbox folder, checked by the box (docs/sandbox.md, "Disk").
 * The kernel's project quotas would enforce it exactly, but need a filesystem
 * and a kernel built for them; this check works everywhere and stays cheap:
 *
 * - What a folder holds is measured by walking it (blocks in use, each inode
 *   once, no link followed), and only when it may matter: the first time, and
 *   when the free space of its filesystem says it may now be over.
 * - While a command runs, the free space is read every quarter second (one
 *   `statfs`); when it has dropped by more than the agent had left, the folder
 *   is measured, and a command that took it over its quota is stopped. So is
 *   one whose folder grew while the disk filled up.
 * - An agent over its quota runs its commands with a file size limit of 0
 *   (writes fail, deleting works) and host-side writes are refused, until it
 *   has deleted enough; the model is told each time.
 * - A single file can never exceed the quota (RLIMIT_FSIZE).
 *
 * What it cannot do: a command writes at disk speed for up to one check
 * interval past the quota before it is stopped.
 */
import { lstat, readdir, statfs } from 'node:fs/promises';
import path from 'node:path';

/** The default quota: 10 GiB, and never more than a quarter of the filesystem. */
export const DEFAULT_DISK_QUOTA_BYTES = 10 * 1024 ** 3;
const CHECK_EVERY_MS = 250;

/** A host-side write refused by the quota; the message is for the model. */
export class DiskQuotaError extends Error {
  constructor(
    readonly heldBytes: number,
    readonly quotaBytes: number,
    readonly addedBytes: number,
  ) {
    super(
      `Not written: your sandbox folder holds ${formatBytes(heldBytes)} and its quota is ` +
        `${formatBytes(quotaBytes)}; ${formatBytes(addedBytes)} more would exceed it. ` +
        'Delete files you no longer need (`du -sh * | sort -h` shows what is big), then try again.',
    );
    this.name = 'DiskQuotaError';
  }
}

/** One agent's folder, as getStatus names it. */
export interface DiskHolder {
  sandbox: string;
  bytes: number;
  overQuota: boolean;
}

export interface DiskStatus {
  /** How the quota is enforced: by the box's own check (project quotas are not used). */
  enforcement: 'box-check';
  quotaBytes: number;
  /** The filesystem of the sandbox folders: its size and what unprivileged writers have left. */
  totalBytes: number;
  freeBytes: number;
  /** Free space is below 2 % of the filesystem (at most 256 MiB): writes will soon fail. */
  full: boolean;
  /** Folders over their quota, and when the disk is full the largest ones: who holds the disk. */
  holders: DiskHolder[];
}

/** Below this much free space the disk counts as full: 2 % of it, at most 256 MiB. */
function lowFloor(totalBytes: number): number {
  return Math.min(256 * 1024 ** 2, totalBytes * 0.02);
}

export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

/** Bytes on disk under `dir` (blocks in use, each inode once), never following a link. */
export async function folderUsage(dir: string): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  const visit = async (file: string): Promise<void> => {
    const info = await lstat(file, { bigint: false }).catch(() => null);
    if (!info) return; // removed meanwhile
    const key = `${info.dev}:${info.ino}`;
    if (!seen.has(key)) {
      seen.add(key);
      total += info.blocks * 512;
    }
    if (!info.isDirectory()) return;
    const names = await readdir(file).catch(() => [] as string[]);
    // A few at a time: wide folders would otherwise open thousands of lstat calls at once.
    for (let i = 0; i < names.length; i += 32)
      await Promise.all(names.slice(i, i + 32).map((name) => visit(path.join(file, name))));
  };
  await visit(dir);
  return total;
}

async function freeSpace(dir: string): Promise<{ total: number; free: number }> {
  const s = await statfs(dir);
  return { total: s.blocks * s.bsize, free: s.bavail * s.bsize };
}

interface FolderState {
  /** Last measured bytes plus what was written since (an upper bound until measured again). */
  bytes: number;
  measuring: Promise<number> | null;
}

/** One command's watch: the file size cap to run it with, a note for the model, and its end. */
export interface CommandDisk {
  /** RLIMIT_FSIZE for the command: 0 while over quota, else the quota. */
  fileBytes: number;
  /** Said to the model before anything ran (over quota), or null. */
  note: string | null;
  /** Stops watching; returns what to tell the model about the disk (stopped, or now over), or null. */
  end(): Promise<string | null>;
}

export class SandboxDisks {
  private readonly folders = new Map<string, FolderState>();
  private quotaBytes: number;
  /** Set by the operator: not capped to the filesystem. */
  private readonly explicit: boolean;
  private readonly checkEveryMs: number;
  /** Sizes of every folder (when the disk is full), reused for a while: measuring them all is slow. */
  private survey: { at: number; sizes: Map<string, number> } | null = null;

  constructor(options: { quotaBytes?: number; checkEveryMs?: number } = {}) {
    this.quotaBytes = options.quotaBytes ?? DEFAULT_DISK_QUOTA_BYTES;
    this.checkEveryMs = options.checkEveryMs ?? CHECK_EVERY_MS;
    this.explicit = options.quotaBytes !== undefined;
  }

  /** Caps the default quota at a quarter of the filesystem holding `root` (an explicit one stays). */
  async fitTo(root: string): Promise<void> {
    if (this.explicit) return;
    const { total } = await freeSpace(root);
    if (total > 0) this.quotaBytes = Math.min(this.quotaBytes, Math.floor(total / 4));
  }

  get quota(): number {
    return this.quotaBytes;
  }

  /** Room for a host-side write of `bytes` (the write tool, an upload), or a DiskQuotaError for the model. */
  async reserve(sandboxDir: string, bytes: number): Promise<void> {
    let state = await this.known(sandboxDir);
    if (state.bytes + bytes > this.quotaBytes) state = await this.measure(sandboxDir);
    if (state.bytes + bytes > this.quotaBytes) {
      throw new DiskQuotaError(state.bytes, this.quotaBytes, bytes);
    }
    state.bytes += bytes;
  }

  /** Watches a command in the folder; `stop` ends it (its sandbox is killed). */
  async begin(sandboxDir: string, stop: () => void): Promise<CommandDisk> {
    // Over quota, it is measured each time: deleting files must lift the refusal.
    let state = await this.known(sandboxDir);
    if (state.bytes > this.quotaBytes) state = await this.measure(sandboxDir);
    const over = state.bytes > this.quotaBytes;
    let base = { bytes: state.bytes, free: (await freeSpace(sandboxDir)).free };
    let stopped: string | null = null;
    let checking = false;
    const check = async () => {
      if (checking || stopped) return;
      checking = true;
      try {
        const { total, free } = await freeSpace(sandboxDir);
        const grown = base.free - free;
        const diskFull = free < lowFloor(total);
        if (!diskFull && base.bytes + grown <= this.quotaBytes) return;
        const measured = (await this.measure(sandboxDir)).bytes;
        if (measured > this.quotaBytes) {
          stopped =
            `sendbox: stopped: your sandbox folder grew to ${formatBytes(measured)}, over its quota of ` +
            `${formatBytes(this.quotaBytes)}.`;
        } else if (diskFull && measured > base.bytes) {
          stopped =
            `sendbox: stopped: the disk is full (${formatBytes(free)} left) and your sandbox folder was growing ` +
            `(${formatBytes(measured)} now).`;
        }
        if (stopped) stop();
        else base = { bytes: measured, free };
      } finally {
        checking = false;
      }
    };
    const timer = over ? null : setInterval(() => void check(), this.checkEveryMs);
    return {
      fileBytes: over ? 0 : this.quotaBytes,
      note: over ? this.overNote(state.bytes) : null,
      end: async () => {
        if (timer) clearInterval(timer);
        if (over) return null;
        if (!stopped) {
          const { free } = await freeSpace(sandboxDir);
          state.bytes = base.bytes + Math.max(0, base.free - free);
          if (state.bytes > this.quotaBytes) state = await this.measure(sandboxDir);
        }
        const now = this.folders.get(sandboxDir)?.bytes ?? state.bytes;
        if (stopped) return `${stopped} ${this.advice()}`;
        return now > this.quotaBytes ? this.overNote(now) : null;
      },
    };
  }

  /** The agent was deleted: its folder is no longer counted. */
  forget(sandboxDir: string): void {
    this.folders.delete(sandboxDir);
  }

  /** The disk of the folders below `root`, naming who holds it (getStatus). */
  async status(root: string): Promise<DiskStatus> {
    const { total, free } = await freeSpace(root);
    const full = free < lowFloor(total);
    const sizes = new Map<string, number>();
    for (const [dir, state] of this.folders) sizes.set(dir, state.bytes);
    if (full) for (const [dir, bytes] of await this.surveyAll(root)) sizes.set(dir, bytes);
    const ranked = [...sizes]
      .map(([sandbox, bytes]) => ({ sandbox, bytes, overQuota: bytes > this.quotaBytes }))
      .sort((a, b) => b.bytes - a.bytes);
    // When full, the (at most three) folders holding a twentieth of the disk or more are named too.
    const holders = ranked.filter(
      (holder, i) => holder.overQuota || (full && i < 3 && holder.bytes >= total / 20),
    );
    return {
      enforcement: 'box-check',
      quotaBytes: this.quotaBytes,
      totalBytes: total,
      freeBytes: free,
      full,
      holders,
    };
  }

  private async surveyAll(root: string): Promise<Map<string, number>> {
    if (this.survey && Date.now() - this.survey.at < 30_000) return this.survey.sizes;
    const sizes = new Map<string, number>();
    for (const name of await readdir(root).catch(() => [] as string[])) {
      const dir = path.join(root, name);
      sizes.set(dir, this.folders.has(dir) ? (await this.measure(dir)).bytes : await folderUsage(dir));
    }
    this.survey = { at: Date.now(), sizes };
    return sizes;
  }

  private overNote(bytes: number): string {
    return (
      `sendbox: your sandbox folder holds ${formatBytes(bytes)}, over its quota of ${formatBytes(this.quotaBytes)}: ` +
      `writing files fails until you delete some. ${this.advice()}`
    );
  }

  private advice(): string {
    return 'Delete files you no longer need (`du -sh * | sort -h` shows what is big); tell the user if you cannot.';
  }

  private async known(sandboxDir: string): Promise<FolderState> {
    const state = this.folders.get(sandboxDir);
    if (state?.measuring) await state.measuring;
    return state ?? this.measure(sandboxDir);
  }

  /** Measures the folder (one walk at a time per folder) and records the result. */
  private async measure(sandboxDir: string): Promise<FolderState> {
    let state = this.folders.get(sandboxDir);
    if (!state) {
      state = { bytes: 0, measuring: null };
      this.folders.set(sandboxDir, state);
    }
    if (!state.measuring) {
      const walking = folderUsage(sandboxDir);
      state.measuring = walking;
      try {
        state.bytes = await walking;
      } finally {
        state.measuring = null;
      }
    } else {
      await state.measuring;
    }
    return state;
  }
}
