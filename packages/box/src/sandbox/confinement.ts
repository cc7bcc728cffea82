/**
 * OS-level confinement of tool processes with bubblewrap (docs/sandbox.md).
 * Every `shell` command runs in its own mount, PID, network, IPC and UTS
 * namespaces: the agent's sandbox folder read-write at its host path, a
 * private tmpfs `/tmp`, the system folders read-only, nothing else of the
 * host's disk. Its PID 1 is a supervisor tied to the box (supervisor.ts): when
 * the command returns, or on timeout or stop, or when the box dies, the PID
 * namespace dies with it and the whole tree goes (`setsid` children included).
 *
 * As root, each agent's processes run as the agent's own uid (sandbox-uids.ts),
 * which the kernel keeps apart from every other uid and counts alone for
 * RLIMIT_NPROC; otherwise bubblewrap maps the caller's uid in a user namespace.
 * No process in a sandbox can use the kernel keyrings (keyring-filter.ts).
 */
import { lstat, mkdtemp, readlink, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { keyringFilter } from './keyring-filter.ts';
import { sweepLeftovers, killProcesses, sandboxProcesses } from './leftovers.ts';
import {
  chownTree,
  DEFAULT_UID_REGISTRY,
  machineUidRange,
  SandboxUids,
  UidRangeError,
  type UidRange,
} from './sandbox-uids.ts';
import { spawnConfined, supervisorArgs, type LaunchFds } from './supervisor.ts';

export interface ResourceLimits {
  /** Address space per process (RLIMIT_AS), bytes. */
  memoryBytes: number;
  /** CPU time per process (RLIMIT_CPU), seconds. */
  cpuSeconds: number;
  /** Largest file a process may write (RLIMIT_FSIZE), bytes. */
  fileBytes: number;
  /** Processes of the agent's uid, all its sandboxes together when the box is root (RLIMIT_NPROC). */
  processes: number;
  /** Open files per process (RLIMIT_NOFILE), so one process cannot hold what the box needs. */
  openFiles: number;
  /** Size of the private `/tmp` (tmpfs, counted in host memory), bytes. */
  tmpBytes: number;
}

export const DEFAULT_LIMITS: ResourceLimits = {
  memoryBytes: 4 * 1024 ** 3,
  cpuSeconds: 600,
  fileBytes: 1024 ** 3,
  processes: 256,
  openFiles: 1024,
  tmpBytes: 512 * 1024 ** 2,
};

/** POSIX shared memory (`/dev/shm`), counted in host memory like /tmp. */
const SHM_BYTES = 64 * 1024 ** 2;

/** What the box tells the operator and the UI about tool confinement. */
export type SandboxStatus =
  | { mode: 'bubblewrap'; confined: true; detail: string }
  | { mode: 'unsafe-host'; confined: false; detail: string }
  | { mode: 'unavailable'; confined: false; detail: string; reason: string; fix: string };

/** One command to start, already wrapped in its confinement. Start it with `spawnConfined` (supervisor.ts). */
export interface LaunchSpec {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** The descriptors it needs from 3 on (the lifeline, the seccomp program); absent unconfined. */
  fds?: LaunchFds;
}

export interface LaunchRequest {
  command: string;
  sandboxDir: string;
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** A unix socket of the agent's egress proxy, bound into the sandbox (absent: no network at all). */
  proxySocket?: string;
  /** The largest file the command may write, when below the limits' (the agent's disk quota). */
  fileBytes?: number;
  /**
   * Host folders bound at their own paths besides the sandbox folder: an MCP server's program
   * files (read-only) and its home (writable, granted to the agent's uid first: `grant`).
   */
  binds?: ReadonlyArray<{ path: string; writable: boolean }>;
  /**
   * Run as the box's own user (in a user namespace, all capabilities dropped) rather than the
   * agent's uid: for the box's own `sessions` server, which reads the user's private transcripts
   * (mcp/sessions-server.ts). Everything else of the confinement stays.
   */
  asBoxUser?: boolean;
}

/** Where the egress proxy's socket appears inside the sandbox, and the port socat forwards from it. */
const PROXY_SOCKET_INSIDE = '/run/sendbox/proxy.sock';
export const PROXY_PORT_INSIDE = 3128;

export interface Confinement {
  readonly status: SandboxStatus;
  /**
   * Readies an agent's sandbox folder before its first launch: as root, the folder gets the
   * agent's own uid (kept across restarts) and everything in it is handed to that uid.
   */
  prepare(sandboxDir: string): Promise<void>;
  /** Hands `dir` (a folder of the agent's outside its sandbox, an MCP server's home) to the agent's uid. */
  grant(sandboxDir: string, dir: string): Promise<void>;
  /**
   * The spawn for a process confined to the agent's sandbox (a command, an MCP server), as the
   * agent's uid, or the reason it may not run (model-readable). `prepare` came first.
   */
  launch(request: LaunchRequest): LaunchSpec | { refused: string };
  /**
   * Kills every process an earlier box left in the sandboxes below `root` (a data dir's
   * `sandboxes/`). At start, before any host-side file work. Returns how many it killed.
   */
  sweep(root: string): Promise<number>;
  /** The agent was deleted and its folder removed: its processes are killed and its uid freed. */
  release(sandboxDir: string): Promise<void>;
  close(): void;
}

export interface ConfinementOptions {
  /** Run tools unconfined when bubblewrap cannot start (`sendbox serve --unsafe-host-tools`). */
  unsafeHostTools?: boolean;
  /** The bubblewrap binary (default: `bwrap` on PATH). */
  bwrap?: string;
  limits?: Partial<ResourceLimits>;
  /** As root: the machine-wide record of agents' uids (default /var/lib/sendbox/sandbox-uids.db). */
  uidRegistry?: string;
  /** As root: the folder holding subuid, passwd and group, for the uid range (default /etc). */
  etc?: string;
}

/** Checks that bubblewrap can really start a sandbox here, and returns the confinement to use. */
export async function detectConfinement(options: ConfinementOptions = {}): Promise<Confinement> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const bwrap = options.bwrap ?? 'bwrap';
  const asRoot = process.getuid?.() === 0;
  const probeDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-probe-'));
  let uids: SandboxUids | null = null;
  try {
    let probeUid: number | null = null;
    if (asRoot) {
      const range = await machineUidRange(options.etc);
      uids = SandboxUids.open(range, options.uidRegistry ?? DEFAULT_UID_REGISTRY);
      probeUid = uids.probeUid;
      await chownTree(probeDir, probeUid);
    }
    const confined = new Bubblewrap(bwrap, limits, uids, await systemMounts());
    await probe(
      confined.launchAs({ command: 'true', sandboxDir: probeDir, cwd: probeDir, env: {} }, probeUid),
    );
    return confined;
  } catch (error) {
    uids?.close();
    const why = probeFailure(error, bwrap);
    const fix = error instanceof UidRangeError ? error.fix : FIX;
    if (options.unsafeHostTools) return new HostProcesses(why);
    return new Unavailable(why, fix);
  } finally {
    await rm(probeDir, { recursive: true, force: true });
  }
}

/** Runs the probe launch to its end (10 s at most); rejects with bubblewrap's complaint. */
function probe(spec: LaunchSpec): Promise<void> {
  return new Promise((resolve, reject) => {
    const { child } = spawnConfined(spec, { cwd: '/' });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    const timer = setTimeout(() => {
      stderr += 'the probe sandbox did not finish within 10 s (is the machine overloaded?)';
      child.kill('SIGKILL');
    }, 10_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(Object.assign(new Error(`exit ${code ?? signal}`), { stderr }));
    });
  });
}

function probeFailure(error: unknown, bwrap: string): string {
  if (error instanceof UidRangeError) return `sandbox uids: ${error.message}`;
  const e = error as NodeJS.ErrnoException & { stderr?: string };
  if (e.code === 'ENOENT' && e.syscall?.startsWith('spawn')) return `bubblewrap (${bwrap}) is not installed`;
  const stderr = typeof e.stderr === 'string' ? e.stderr.trim() : '';
  return `bubblewrap could not start a sandbox: ${stderr || e.message}`;
}

const FIX =
  'Install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`) and allow user namespaces ' +
  '(`sysctl kernel.unprivileged_userns_clone=1`; on Ubuntu also ' +
  '`sysctl kernel.apparmor_restrict_unprivileged_userns=0`), then restart sendbox. ' +
  'To run tools on the host without confinement anyway, start it with `sendbox serve --unsafe-host-tools`.';

/** The read-only system folders of this machine: /usr and /etc, the merged-/usr links or folders, /opt. */
async function systemMounts(): Promise<string[]> {
  const args: string[] = [];
  for (const dir of ['/usr', '/etc', '/opt', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    const info = await lstat(dir).catch(() => null);
    if (info === null) continue;
    if (info.isSymbolicLink()) {
      args.push('--symlink', await readlink(dir), dir);
    } else if (info.isDirectory()) {
      args.push('--ro-bind', dir, dir);
    }
  }
  return args;
}

class Bubblewrap implements Confinement {
  readonly status: SandboxStatus;
  private readonly filter = keyringFilter();

  constructor(
    private readonly bwrap: string,
    private readonly limits: ResourceLimits,
    /** As root: the agents' uids; null: the box's own uid in a user namespace. */
    private readonly uids: SandboxUids | null,
    private readonly system: string[],
  ) {
    this.status = {
      mode: 'bubblewrap',
      confined: true,
      detail:
        `tools run in bubblewrap${uids ? `, each agent as its own uid (${describeRange(uids.range)})` : ''}: ` +
        "only the agent's sandbox folder and a private /tmp are writable; no network unless allowed",
    };
  }

  async prepare(sandboxDir: string): Promise<void> {
    await this.uids?.assign(sandboxDir);
  }

  async grant(sandboxDir: string, dir: string): Promise<void> {
    if (!this.uids) return;
    const uid = this.uids.uidOf(sandboxDir);
    if (uid === undefined) throw new Error(`the sandbox ${sandboxDir} was not prepared`);
    await chownTree(dir, uid);
  }

  launch(request: LaunchRequest): LaunchSpec {
    if (!this.uids || request.asBoxUser) return this.launchAs(request, null);
    const uid = this.uids.uidOf(request.sandboxDir);
    // A bug of the caller, not the agent's: every session that runs turns prepares its folder when it loads.
    if (uid === undefined) throw new Error(`the sandbox ${request.sandboxDir} was not prepared`);
    return this.launchAs(request, uid);
  }

  /** The launch as `uid` (root), or as the box's own uid in a user namespace (null). */
  launchAs(request: LaunchRequest, uid: number | null): LaunchSpec {
    const l = this.limits;
    const fileBytes = Math.min(l.fileBytes, request.fileBytes ?? Infinity);
    // The command enters its folder as the agent: the supervisor (no CAP_DAC_*) cannot, and needs not.
    const script =
      `${limitsLine({ ...l, fileBytes })}\ncd -- ${quoteForBash(request.cwd)} || exit 126\n` +
      (request.proxySocket ? withProxyForwarder(request.command) : request.command);
    const args = [
      '--unshare-pid',
      '--unshare-net',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      ...(uid === null ? ['--unshare-user'] : []),
      '--die-with-parent',
      '--as-pid-1',
      '--new-session',
      // As root the supervisor keeps only what switching to the agent's uid takes.
      '--cap-drop',
      'ALL',
      ...(uid === null
        ? []
        : ['--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID', '--cap-add', 'CAP_SETPCAP']),
      ...(this.filter ? ['--seccomp', '4'] : []),
      '--hostname',
      'sandbox',
      ...this.system,
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      // Private /tmp and /dev/shm, writable by the agent's uid (sticky, like the host's).
      '--perms',
      '1777',
      '--size',
      String(l.tmpBytes),
      '--tmpfs',
      '/tmp',
      '--perms',
      '1777',
      '--size',
      String(SHM_BYTES),
      '--tmpfs',
      '/dev/shm',
      ...ancestorDirs(request.sandboxDir),
      '--bind',
      request.sandboxDir,
      request.sandboxDir,
      ...(request.binds ?? []).flatMap((bind) => [
        ...ancestorDirs(bind.path),
        bind.writable ? '--bind' : '--ro-bind',
        bind.path,
        bind.path,
      ]),
      ...(request.proxySocket
        ? ['--dir', path.dirname(PROXY_SOCKET_INSIDE), '--bind', request.proxySocket, PROXY_SOCKET_INSIDE]
        : []),
      '--chdir',
      '/',
      '--',
      // The limits are set (soft and hard: they cannot be raised again) by the same bash that then
      // runs the command, which saves an exec per call over prlimit.
      ...supervisorArgs(
        request.sandboxDir,
        script,
        uid === null
          ? []
          : [
              `--reuid=${uid}`,
              `--regid=${uid}`,
              '--clear-groups',
              '--no-new-privs',
              '--inh-caps=-all',
              '--bounding-set=-all',
            ],
      ),
    ];
    // bubblewrap hands its own environment to the command: secrets travel there, never in argv
    // (which every local user can read in /proc).
    const env: Record<string, string> = { ...request.env, TMPDIR: '/tmp' };
    if (request.proxySocket) Object.assign(env, proxyEnv());
    return {
      file: this.bwrap,
      args,
      env,
      fds: { lifeline: true, ...(this.filter ? { seccomp: this.filter } : {}) },
    };
  }

  async sweep(root: string): Promise<number> {
    return sweepLeftovers(root, this.uids?.uidsUnder(path.resolve(root)) ?? new Set());
  }

  async release(sandboxDir: string): Promise<void> {
    await killProcesses(await sandboxProcesses(sandboxDir));
    await this.uids?.release(sandboxDir);
  }

  close(): void {
    this.uids?.close();
  }
}

function describeRange(range: UidRange): string {
  return `uids ${range.first}–${range.first + range.count - 1}, ${range.source}`;
}

/** The limits as bash's `ulimit` (memory and file size in KiB), before anything of the command runs. */
function limitsLine(l: ResourceLimits): string {
  const kib = (bytes: number) => Math.floor(bytes / 1024);
  return `ulimit -v ${kib(l.memoryBytes)} -t ${l.cpuSeconds} -f ${kib(l.fileBytes)} -u ${l.processes} -n ${l.openFiles} -c 0 || exit 126`;
}

/**
 * The folders above the sandbox, traversable but not listable: bubblewrap
 * would create them 0700 root-owned, which the sandbox user cannot cross.
 */
function ancestorDirs(sandboxDir: string): string[] {
  const out: string[] = [];
  let dir = path.dirname(sandboxDir);
  const chain: string[] = [];
  while (dir !== path.dirname(dir)) {
    if (dir !== '/tmp') chain.unshift(dir); // /tmp is the private tmpfs, made 1777 above
    dir = path.dirname(dir);
  }
  for (const ancestor of chain) out.push('--perms', '0711', '--dir', ancestor);
  return out;
}

/** Starts socat inside the sandbox (TCP on loopback → the proxy's socket), waits for it, then runs the command. */
function withProxyForwarder(command: string): string {
  const forward =
    `socat TCP-LISTEN:${PROXY_PORT_INSIDE},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${PROXY_SOCKET_INSIDE} ` +
    '</dev/null >/dev/null 2>&1 &';
  const wait = `for _ in $(seq 200); do (: </dev/tcp/127.0.0.1/${PROXY_PORT_INSIDE}) 2>/dev/null && break; sleep 0.01; done`;
  return `${forward}\n${wait}\nexec bash -c ${quoteForBash(command)}`;
}

/** `text` as one single-quoted bash word. */
export function quoteForBash(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT_INSIDE}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    all_proxy: url,
    NO_PROXY: '',
    no_proxy: '',
  };
}

/** `--unsafe-host-tools`: commands run as the box's own user, in their own process group only. */
class HostProcesses implements Confinement {
  readonly status: SandboxStatus;
  constructor(why: string) {
    this.status = {
      mode: 'unsafe-host',
      confined: false,
      detail:
        `UNSAFE: tools run on the host without confinement (--unsafe-host-tools; ${why}). ` +
        "An agent's commands can read and change everything the box's user can, including other agents and the gateway token.",
    };
  }
  prepare(): Promise<void> {
    return Promise.resolve();
  }
  grant(): Promise<void> {
    return Promise.resolve();
  }
  launch(request: LaunchRequest): LaunchSpec {
    return { file: 'bash', args: ['-c', request.command], env: { ...request.env } };
  }
  // Sandboxes of an earlier, confined run of the box may still be around.
  sweep(root: string): Promise<number> {
    return sweepLeftovers(root, new Set());
  }
  release(): Promise<void> {
    return Promise.resolve();
  }
  close(): void {}
}

/** No confinement and no operator consent: commands are refused, saying why and how to fix it. */
class Unavailable implements Confinement {
  readonly status: Extract<SandboxStatus, { mode: 'unavailable' }>;
  constructor(why: string, fix: string) {
    this.status = {
      mode: 'unavailable',
      confined: false,
      detail: `tools are disabled: ${why}`,
      reason: why,
      fix,
    };
  }
  prepare(): Promise<void> {
    return Promise.resolve();
  }
  grant(): Promise<void> {
    return Promise.resolve();
  }
  sweep(root: string): Promise<number> {
    return sweepLeftovers(root, new Set());
  }
  release(): Promise<void> {
    return Promise.resolve();
  }
  close(): void {}
  launch(): { refused: string } {
    return {
      refused:
        `The shell tool is disabled on this box: ${this.status.reason}. ` +
        'Commands cannot run until the operator fixes it; tell the user. ' +
        `How to fix: ${this.status.fix}`,
    };
  }
}
