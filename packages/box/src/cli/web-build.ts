/**
 * `npm start` builds the web UI when its build is missing or older than its
 * sources, so a fresh checkout runs with one command and an edited UI is never
 * served stale.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** `packages/web` of this checkout. */
export const WEB_PACKAGE_DIR = fileURLToPath(new URL('../../../web/', import.meta.url));
export const WEB_DIST_DIR = path.join(WEB_PACKAGE_DIR, 'dist');
const REPO_ROOT = path.resolve(WEB_PACKAGE_DIR, '..', '..');

const SKIPPED = new Set(['node_modules', 'dist', '.vite', 'coverage']);

/** The newest modification time (ms) of any source file under `dir`, skipping build output. */
export function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name) || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(full));
    else if (entry.isFile()) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

export type WebBuildNeed = 'fresh' | 'missing' | 'stale';

export function webBuildNeed(webDir = WEB_PACKAGE_DIR): WebBuildNeed {
  const index = path.join(webDir, 'dist', 'index.html');
  if (!fs.existsSync(index)) return 'missing';
  return fs.statSync(index).mtimeMs < newestSourceMtime(webDir) ? 'stale' : 'fresh';
}

function hasBuildScript(webDir: string): boolean {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(webDir, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    return typeof manifest.scripts?.build === 'string';
  } catch {
    return false;
  }
}

function runNpmBuild(): Promise<number> {
  return new Promise((resolve, reject) => {
    // The build's own output goes to stderr so stdout stays the box's banner.
    const child = spawn('npm', ['run', 'build', '-w', '@sendbox/web'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', process.stderr, process.stderr],
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/**
 * Builds the UI if needed. Returns what it did; throws only when there is no
 * usable build at all afterwards. `say` receives progress lines for the terminal.
 */
export async function ensureWebBuild(say: (line: string) => void): Promise<'fresh' | 'built' | 'stale-kept'> {
  const need = webBuildNeed();
  if (need === 'fresh') return 'fresh';
  if (!hasBuildScript(WEB_PACKAGE_DIR)) {
    if (need === 'stale') return 'stale-kept';
    throw new Error(`the web UI is not built and ${WEB_PACKAGE_DIR}package.json has no "build" script`);
  }
  say(need === 'missing' ? 'Building the web UI (first run)…' : 'The web UI sources changed; rebuilding…');
  const code = await runNpmBuild();
  if (code === 0 && webBuildNeed() !== 'missing') return 'built';
  if (need === 'stale') {
    say(`The web UI build failed (exit ${code}); serving the previous build from ${WEB_DIST_DIR}.`);
    return 'stale-kept';
  }
  throw new Error(
    `the web UI build failed (exit ${code}); run \`npm run build -w @sendbox/web\` to see why, ` +
      'or start with --no-build to serve the API without the UI',
  );
}
