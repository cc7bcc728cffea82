/**
 * How a stdio server starts for an agent: under the same bubblewrap confinement as `shell`
 * (sandbox/confinement.ts), as the agent's uid, in the agent's sandbox folder, with
 *
 * - a writable home of its own, `<data-dir>/mcp-homes/<agent>/<server>` (its npm or uv cache lives
 *   there), handed to the agent's uid and bound at its own path, nothing else of the data dir;
 * - its program files read-only: a command given by absolute path brings its folder, and
 *   `readOnly` names more (a checkout with its node_modules);
 * - network only to its `allowDomains`, through an egress proxy of its own;
 * - its env from mcp.json with `${secret:NAME}` filled from the box's secrets, and no other secret.
 */
import { constants } from 'node:fs';
import { access, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Confinement } from '../sandbox/confinement.ts';
import { quoteForBash } from '../sandbox/confinement.ts';
import type { EgressProxies } from '../sandbox/egress-proxy.ts';
import { scrubberFor } from '../secrets/scrub.ts';
import { missingSecretsProblem, resolveSecrets, type StdioServerConfig } from './config.ts';
import { ConfinedStdioTransport } from './stdio-transport.ts';

export interface StdioLaunchContext {
  dataDir: string;
  agentId: string;
  sandboxDir: string;
  server: string;
  config: StdioServerConfig;
  confinement: Confinement;
  egress?: EgressProxies | undefined;
  /** The box's environment for tools (PATH, LANG). */
  baseEnv: Readonly<Record<string, string>>;
  boxSecrets: ReadonlyMap<string, string>;
  /** The box log: a line of the server's stderr, already scrubbed. */
  log(line: string): void;
  /** Run as the box's user, not the agent's uid (the `sessions` builtin: sessions-server.ts). */
  asBoxUser?: boolean;
}

/** The home of an agent's server under the data dir. */
export function serverHome(dataDir: string, agentId: string, server: string): string {
  return path.join(dataDir, 'mcp-homes', agentId, server);
}

export async function stdioTransport(
  ctx: StdioLaunchContext,
): Promise<ConfinedStdioTransport | { refused: string }> {
  const { config } = ctx;
  const env = resolveSecrets(config.env, ctx.boxSecrets);
  if ('missing' in env) return { refused: missingSecretsProblem(ctx.server, env.missing) };
  const home = serverHome(ctx.dataDir, ctx.agentId, ctx.server);
  await mkdir(home, { recursive: true, mode: 0o700 });
  if (!ctx.asBoxUser) await ctx.confinement.grant(ctx.sandboxDir, home);
  const binds: Array<{ path: string; writable: boolean }> = [{ path: home, writable: true }];
  for (const folder of await programFolders(config, ctx.baseEnv.PATH ?? ''))
    binds.push({ path: folder, writable: false });
  const proxySocket =
    ctx.confinement.status.confined && ctx.egress && config.allowDomains.length
      ? await ctx.egress.socketFor(`${ctx.sandboxDir}#mcp:${ctx.server}`, {
          allowDomains: config.allowDomains,
        })
      : null;
  const command = ['exec', ...[config.command, ...config.args].map(quoteForBash)].join(' ');
  const spec = ctx.confinement.launch({
    command,
    sandboxDir: ctx.sandboxDir,
    // As the box's user the agent's folder (its uid's, 0700) is closed to it: it works in its home.
    cwd: ctx.asBoxUser ? home : ctx.sandboxDir,
    env: {
      ...ctx.baseEnv,
      HOME: home,
      // npx and uvx keep their caches in the home (the recipes of docs/mcp-client.md).
      npm_config_cache: path.join(home, '.npm'),
      UV_CACHE_DIR: path.join(home, '.cache', 'uv'),
      XDG_CACHE_HOME: path.join(home, '.cache'),
      ...env.values,
    },
    binds,
    ...(proxySocket ? { proxySocket } : {}),
    ...(ctx.asBoxUser ? { asBoxUser: true } : {}),
  });
  if ('refused' in spec) return { refused: spec.refused };
  const secretValues = new Map(
    Object.entries(env.values).filter(([key]) => config.env[key]?.includes('${secret:')),
  );
  const scrub = scrubberFor(secretValues);
  return new ConfinedStdioTransport(spec, ctx.sandboxDir, (line) => ctx.log(scrub.text(line)));
}

/**
 * The folders of a server's own program: where its command really is (found on PATH, links
 * followed: a `node` linked into a private install brings that install, npx with it), and
 * `readOnly`. A command in a `bin` folder brings the prefix above it (its lib/ beside).
 */
async function programFolders(config: StdioServerConfig, pathVar: string): Promise<string[]> {
  const folders = new Set<string>();
  const add = async (p: string) => {
    const real = await realpath(p).catch(() => null);
    if (real && !isSystemPath(real)) folders.add(real);
  };
  const command = await commandPath(config.command, pathVar);
  if (command) {
    const real = await realpath(command).catch(() => null);
    if (real) {
      const dir = path.dirname(real);
      await add(path.basename(dir) === 'bin' ? path.dirname(dir) : dir);
    }
  }
  for (const folder of config.readOnly) await add(folder);
  return [...folders];
}

async function commandPath(command: string, pathVar: string): Promise<string | null> {
  if (command.includes('/')) return path.isAbsolute(command) ? command : null;
  for (const dir of pathVar.split(':')) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return null;
}

/** Mounted in every sandbox already (confinement.ts systemMounts). */
function isSystemPath(p: string): boolean {
  return ['/usr', '/etc', '/opt', '/bin', '/sbin', '/lib', '/lib64'].some(
    (root) => p === root || p.startsWith(`${root}/`),
  );
}
