/**
 * The `sessions` builtin (`"sessions": {"builtin": "sessions"}` in mcp.json): `txcript mcp`
 * (packages/txcript, docs/mcp.md), so an agent can list, search and read every transcript of the
 * box's user. It starts as a stdio server like any other (stdio-launch.ts), with what it reads
 * decided here:
 *
 * - the transcript roots of the harnesses txcript knows, under the host user's home (those that
 *   exist), and the box's own `agent-transcripts/` (on a cluster worker, its copy of every agent's
 *   rows, kept current as they are written), each bound read-only at its own path; nothing
 *   else of the home or the data dir (`keys/`, `gateway.json`, sandboxes, secrets) is in its view;
 * - txcript's own program (its install: the checkout or package with its node_modules), read-only;
 * - its search index in its writable home (`XDG_CACHE_HOME`), no network at all;
 * - it runs as the box's user (`asBoxUser`), not the agent's uid: the transcripts are the user's
 *   private files (0600 in 0700 folders), which only their owner may read. The server is the box's
 *   own code, and bubblewrap still limits it to the folders above.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuiltinServerConfig, StdioServerConfig } from './config.ts';

/** Where each harness keeps its sessions by default, under the home (docs/cli.md's table). */
export const TRANSCRIPT_ROOTS: readonly string[] = [
  '.claude/projects',
  '.codex/sessions',
  '.pi/agent/sessions',
  '.campfire/agent/sessions',
  '.grok/sessions',
  '.local/share/opencode',
  '.local/share/amp/threads',
  '.cursor/chats',
  '.config/Cursor/User/globalStorage',
  '.hermes',
  '.config/Claude/local-agent-mode-sessions',
];

export interface SessionsServerContext {
  dataDir: string;
  /** The host user's home, whose transcripts the server reads (default `os.homedir()`). */
  hostHome?: string | undefined;
  /**
   * The box's own transcripts (default `<dataDir>/agent-transcripts`; a cluster worker's copy of every
   * agent's rows, cluster/layout-mirror.ts).
   */
  boxTranscripts?: string | undefined;
  /** The server's own writable home (stdio-launch.ts serverHome). */
  serverHome: string;
}

/**
 * The stdio launch of the `sessions` builtin: `node <txcript> mcp` with its read-only view. Start
 * it with `asBoxUser` (stdio-launch.ts).
 */
export async function sessionsServerConfig(
  builtin: BuiltinServerConfig,
  ctx: SessionsServerContext,
): Promise<StdioServerConfig> {
  const home = path.resolve(ctx.hostHome ?? os.homedir());
  const dataDir = path.resolve(ctx.dataDir);
  const roots: string[] = [];
  for (const relative of TRANSCRIPT_ROOTS) {
    const root = path.join(home, relative);
    // The data dir is never bound whole: a root inside it (a home that is the data dir) is left out.
    if (isInside(root, dataDir) || !(await isFolder(root))) continue;
    roots.push(root);
  }
  const boxTranscripts = path.resolve(ctx.boxTranscripts ?? path.join(dataDir, 'agent-transcripts'));
  if (await isFolder(boxTranscripts)) roots.push(boxTranscripts);
  const txcript = await txcriptInstall();
  if (isInside(dataDir, txcript.root)) {
    throw new Error(
      `the sessions server cannot start: the data dir ${dataDir} is inside txcript's install ${txcript.root}, ` +
        'which it would see whole; move the data dir out of it',
    );
  }
  return {
    kind: 'stdio',
    command: process.execPath,
    args: [txcript.bin, 'mcp'],
    env: {
      // The harnesses' default roots are found under HOME; only the roots above are bound there.
      HOME: home,
      XDG_CACHE_HOME: path.join(ctx.serverHome, '.cache'),
      TXCRIPT_GROK_BOT_ROOT: boxTranscripts,
      NO_COLOR: '1',
    },
    allowDomains: [],
    readOnly: [txcript.root, ...roots],
    ...(builtin.description === undefined ? {} : { description: builtin.description }),
    ...(builtin.approval === undefined ? {} : { approval: builtin.approval }),
    ...(builtin.timeoutMs === undefined ? {} : { timeoutMs: builtin.timeoutMs }),
  };
}

/**
 * txcript's entry and the folder holding everything it loads: the workspace of a checkout (its
 * packages and node_modules), else the package's own folder.
 */
export async function txcriptInstall(): Promise<{ bin: string; root: string }> {
  const runEntry = fileURLToPath(import.meta.resolve('@sendbox/txcript/run-entry'));
  const pkg = await realpath(path.dirname(path.dirname(runEntry)));
  const bin = path.join(pkg, 'bin', 'txcript.mjs');
  for (let dir = path.dirname(pkg); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = await readFile(path.join(dir, 'package.json'), 'utf8').catch(() => null);
    if (manifest !== null && 'workspaces' in (JSON.parse(manifest) as object)) return { bin, root: dir };
  }
  return { bin, root: pkg };
}

async function isFolder(p: string): Promise<boolean> {
  return stat(p).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
