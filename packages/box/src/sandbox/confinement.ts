/**
 * OS-level confinement of tool processes with bubblewrap (docs/sandbox.md).
 * Every `shell` command runs in its own mount, PID, network, IPC and UTS
 * namespaces: the agent's sandbox folder read-write at its host path, a
 * private tmpfs `/tmp`, the system folders read-only, nothing else of the
 * host's disk. The PID namespace dies with bubblewrap, so killing it kills
 * the whole tree (`setsid` children included).
 *
 * RLIMIT_NPROC is not enforced for processes whose real uid is 0, so when the
 * box runs as root the command drops to an unprivileged uid (nobody) inside
 * the sandbox; otherwise bubblewrap maps the caller's uid in a user namespace.
 */
import { execFile } from 'node:child_process';
import { lchown, lstat, mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ResourceLimits {
  /** Address space per process (RLIMIT_AS), bytes. */
  memoryBytes: number;
  /** CPU time per process (RLIMIT_CPU), seconds. */
  cpuSeconds: number;
  /** Largest file a process may write (RLIMIT_FSIZE), bytes. */
  fileBytes: number;
  /** Processes of the sandbox user (RLIMIT_NPROC). */
  processes: number;
  /** Size of the private `/tmp` (tmpfs, counted in host memory), bytes. */
  tmpBytes: number;
}

export const DEFAULT_LIMITS: ResourceLimits = {
  memoryBytes: 4 * 1024 ** 3,
  cpuSeconds: 600,
  fileBytes: 1024 ** 3,
  processes: 256,
  tmpBytes: 512 * 1024 ** 2,
};

/** POSIX shared memory (`/dev/shm`), counted in host memory like /tmp. */
const SHM_BYTES = 64 * 1024 ** 2;

/** The uid/gid tool processes run as when the box runs as root (nobody on Debian). */
export const SANDBOX_USER = { uid: 65534, gid: 65534 } as const;

/** What the box tells the operator and the UI about tool confinement. */
export type SandboxStatus =
  | { mode: 'bubblewrap'; confined: true; detail: string }
  | { mode: 'unsafe-host'; confined: false; detail: string }
  | { mode: 'unavailable'; confined: false; detail: string; reason: string; fix: string };

/** One command to start, already wrapped in its confinement. */
export interface LaunchSpec {
  file: string;
  args: string[];
  env: Record<string, string>;
}

export interface LaunchRequest {
  command: string;
  sandboxDir: string;
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** A unix socket of the agent's egress proxy, bound into the sandbox (absent: no network at all). */
  proxySocket?: string;
}

/** Where the egress proxy's socket appears inside the sandbox, and the port socat forwards from it. */
const PROXY_SOCKET_INSIDE = '/run/sendbox/proxy.sock';
export const PROXY_PORT_INSIDE = 3128;

export interface Confinement {
  readonly status: SandboxStatus;
  /** Owner for files the host creates in a sandbox (the sandbox user when the box is root), else null. */
  readonly fileOwner: { uid: number; gid: number } | null;
  /** Makes the sandbox folder usable by the sandbox user (once per agent). */
  prepare(sandboxDir: string): Promise<void>;
  /** The spawn for a command, or the reason it may not run (model-readable). */
  launch(request: LaunchRequest): LaunchSpec | { refused: string };
}

export interface ConfinementOptions {
  /** Run tools unconfined when bubblewrap cannot start (`sendbox serve --unsafe-host-tools`). */
  unsafeHostTools?: boolean;
  /** The bubblewrap binary (default: `bwrap` on PATH). */
  bwrap?: string;
  limits?: Partial<ResourceLimits>;
}

/** Checks that bubblewrap can really start a sandbox here, and returns the confinement to use. */
export async function detectConfinement(options: ConfinementOptions = {}): Promise<Confinement> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const bwrap = options.bwrap ?? 'bwrap';
  const asRoot = process.getuid?.() === 0;
  const probeDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-probe-'));
  try {
    const confined = new Bubblewrap(bwrap, limits, asRoot, await systemMounts());
    await confined.prepare(probeDir);
    const spec = confined.launch({ command: 'true', sandboxDir: probeDir, cwd: probeDir, env: {} });
    await run(spec.file, spec.args, { env: spec.env, timeout: 10_000 });
    return confined;
  } catch (error) {
    const why = probeFailure(error, bwrap);
    if (options.unsafeHostTools) return new HostProcesses(why);
    return new Unavailable(why);
  } finally {
    await rm(probeDir, { recursive: true, force: true });
  }
}

function probeFailure(error: unknown, bwrap: string): string {
  const e = error as NodeJS.ErrnoException & { stderr?: string };
  if (e.code === 'ENOENT') return `bubblewrap (${bwrap}) is not installed`;
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
  readonly fileOwner: { uid: number; gid: number } | null;

  constructor(
    private readonly bwrap: string,
    private readonly limits: ResourceLimits,
    private readonly asRoot: boolean,
    private readonly system: string[],
  ) {
    this.fileOwner = asRoot ? SANDBOX_USER : null;
    this.status = {
      mode: 'bubblewrap',
      confined: true,
      detail: `tools run in bubblewrap${asRoot ? ` as uid ${SANDBOX_USER.uid}` : ''}: only the agent's sandbox folder and a private /tmp are writable; no network unless allowed`,
    };
  }

  async prepare(sandboxDir: string): Promise<void> {
    if (!this.fileOwner) return;
    const info = await lstat(sandboxDir);
    if (info.uid === this.fileOwner.uid) return;
    // A folder from before confinement (or another host): hand it, never following links, to the sandbox user.
    await chownTree(sandboxDir, this.fileOwner);
  }

  launch(request: LaunchRequest): LaunchSpec {
    const l = this.limits;
    const args = [
      '--unshare-pid',
      '--unshare-net',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      ...(this.asRoot ? [] : ['--unshare-user']),
      '--die-with-parent',
      '--new-session',
      '--hostname',
      'sandbox',
      ...this.system,
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      // Private /tmp and /dev/shm, writable by the sandbox user (sticky, like the host's).
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
      ...(request.proxySocket
        ? ['--dir', path.dirname(PROXY_SOCKET_INSIDE), '--bind', request.proxySocket, PROXY_SOCKET_INSIDE]
        : []),
      '--chdir',
      request.cwd,
      '--',
      ...(this.asRoot
        ? [
            'setpriv',
            `--reuid=${SANDBOX_USER.uid}`,
            `--regid=${SANDBOX_USER.gid}`,
            '--clear-groups',
            '--no-new-privs',
            '--inh-caps=-all',
            '--bounding-set=-all',
            '--',
          ]
        : []),
      'bash',
      '-c',
      // The limits are set (soft and hard: they cannot be raised again) by the same bash that then
      // runs the command, which saves an exec per call over prlimit.
      `${limitsLine(l)}\n${request.proxySocket ? withProxyForwarder(request.command) : request.command}`,
    ];
    // bubblewrap hands its own environment to the command: secrets travel there, never in argv
    // (which every local user can read in /proc).
    const env: Record<string, string> = { ...request.env, TMPDIR: '/tmp' };
    if (request.proxySocket) Object.assign(env, proxyEnv());
    return { file: this.bwrap, args, env };
  }
}

/** The limits as bash's `ulimit` (memory and file size in KiB), before anything of the command runs. */
function limitsLine(l: ResourceLimits): string {
  const kib = (bytes: number) => Math.floor(bytes / 1024);
  return `ulimit -v ${kib(l.memoryBytes)} -t ${l.cpuSeconds} -f ${kib(l.fileBytes)} -u ${l.processes} -c 0 || exit 126`;
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

async function chownTree(dir: string, owner: { uid: number; gid: number }): Promise<void> {
  await lchown(dir, owner.uid, owner.gid);
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    const child = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(child, owner);
    else await lchown(child, owner.uid, owner.gid);
  }
}

/** `--unsafe-host-tools`: commands run as the box's own user, in their own process group only. */
class HostProcesses implements Confinement {
  readonly status: SandboxStatus;
  readonly fileOwner = null;
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
  launch(request: LaunchRequest): LaunchSpec {
    return { file: 'bash', args: ['-c', request.command], env: { ...request.env } };
  }
}

/** No confinement and no operator consent: commands are refused, saying why and how to fix it. */
class Unavailable implements Confinement {
  readonly status: Extract<SandboxStatus, { mode: 'unavailable' }>;
  readonly fileOwner = null;
  constructor(why: string) {
    this.status = {
      mode: 'unavailable',
      confined: false,
      detail: `tools are disabled: ${why}`,
      reason: why,
      fix: FIX,
    };
  }
  prepare(): Promise<void> {
    return Promise.resolve();
  }
  launch(): { refused: string } {
    return {
      refused:
        `The shell tool is disabled on this box: ${this.status.reason}. ` +
        'Commands cannot run until the operator fixes it; tell the user. ' +
        `How to fix: ${FIX}`,
    };
  }
}
