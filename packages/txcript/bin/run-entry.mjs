// Starts a TypeScript CLI entry point fast.
//
// The sources are TypeScript with no build step. Loading them through tsx
// transforms a few hundred modules on every start (seconds on a small
// machine), so the first run bundles the entry with esbuild (a dependency of
// tsx) into `dist/`, and later runs import that bundle while it is newer than
// every source file of the workspace packages. When the bundle cannot be made
// (read-only checkout, esbuild missing) it falls back to tsx.
// SENDBOX_FROM_SOURCE=1 always runs the sources through tsx.
//
// txcript's worker threads (WORKERS) are bundled with every bundle, as files
// next to it, where the bundled code looks for them; the bundle counts as
// fresh only with all of them.
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const packagesDir = fileURLToPath(new URL('../../', import.meta.url));

/** Worker file names next to a bundle, and their TypeScript entries (grok-bot/ledger-reads.ts: WORKER_FILE). */
const WORKERS = {
  'txcript-ledger-worker.mjs': fileURLToPath(
    new URL('../src/harness/grok-bot/ledger-worker.ts', import.meta.url),
  ),
  'txcript-scan-worker.mjs': fileURLToPath(new URL('../src/search/scan-worker.ts', import.meta.url)),
  'txcript-read-worker.mjs': fileURLToPath(new URL('../src/search/read-worker.ts', import.meta.url)),
};

/**
 * The bundle is split (esbuild `splitting`): the entry file holds what
 * start-up needs (the CLI wiring), and each command's modules, the codecs
 * and zod sit in chunks next to it that load when a command imports them, so
 * `--help` parses a tenth of the code. `<bundle>.files` lists every file of
 * one build; the bundle is fresh only while all of them are there.
 */
const CHUNK_PREFIX = 'chunk-';
/** Chunks of older builds are deleted once this old: a process still running one has loaded them by then. */
const STALE_CHUNK_MS = 10 * 60 * 1000;

function manifestOf(bundle) {
  return `${bundle}.files`;
}

/** The files of the bundle's build (itself, its workers, its chunks), or undefined when unknown. */
function outputsOf(bundle) {
  let names;
  try {
    names = readFileSync(manifestOf(bundle), 'utf8')
      .split('\n')
      .filter((n) => n !== '');
  } catch {
    return undefined;
  }
  const dir = dirname(bundle);
  return names.map((name) => `${dir}${sep}${name}`); // join(dir, name), without normalising each
}

function newestSourceMtime(dir) {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    // join(dir, name) for a normalised `dir`: path.join, called for every source file, set V8's
    // optimising compiler going at each start, which costs a few MB and milliseconds.
    const path = `${dir}${sep}${entry.name}`;
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(path));
    else if (/\.(ts|tsx|json)$/.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function isFresh(bundle, packages) {
  const outputs = outputsOf(bundle);
  if (outputs === undefined) return false;
  const required = [bundle, ...Object.keys(WORKERS).map((name) => join(dirname(bundle), name))];
  if (!required.every((f) => outputs.includes(f))) return false;
  const built = Math.min(...outputs.map(mtime));
  if (built === 0) return false;
  for (const pkg of packages) {
    if (newestSourceMtime(join(packagesDir, pkg, 'src')) > built) return false;
    if (mtime(join(packagesDir, pkg, 'package.json')) > built) return false;
  }
  return true;
}

async function build(entry, bundle) {
  const esbuild = await import('esbuild');
  const dir = dirname(bundle);
  /** [file name in `dir`, TypeScript entry] */
  const entries = [[basename(bundle), entry], ...Object.entries(WORKERS)];
  const temp = join(dir, `.build-${basename(bundle)}.${process.pid}.tmp`);
  try {
    await esbuild.build({
      // Output names without the extension, which outExtension adds.
      entryPoints: entries.map(([name, input]) => ({ in: input, out: basename(name, '.mjs') })),
      outdir: temp,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      // Content-hashed, so two builds never write different chunks under one name.
      chunkNames: `${CHUNK_PREFIX}[name]-[hash]`,
      platform: 'node',
      format: 'esm',
      target: 'node24',
      // Native addons stay in node_modules.
      external: ['better-sqlite3'],
      banner: {
        js: "import { createRequire as __sendboxRequire } from 'node:module'; const require = __sendboxRequire(import.meta.url);",
      },
      logLevel: 'silent',
    });
    const built = readdirSync(temp);
    const entryNames = new Set(entries.map(([name]) => name));
    // Each rename is atomic: a concurrent start sees an old file or a new one. Chunks go first, the
    // bundle last, so a new bundle always finds its chunks and workers.
    const order = [...built.filter((n) => !entryNames.has(n)), ...entries.map(([name]) => name).reverse()];
    for (const name of order) renameSync(join(temp, name), join(dir, name));
    writeFileSync(join(temp, 'files'), `${order.join('\n')}\n`);
    renameSync(join(temp, 'files'), manifestOf(bundle));
    removeStaleChunks(dir, new Set(order));
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

/** Chunks no build of this bundle lists any more, once older than STALE_CHUNK_MS. */
function removeStaleChunks(dir, current) {
  const now = Date.now();
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(CHUNK_PREFIX) || current.has(name)) continue;
    const path = join(dir, name);
    if (now - mtime(path) > STALE_CHUNK_MS) rmSync(path, { force: true });
  }
}

/**
 * @param {{ entry: string, bundle: string, packages: string[] }} options absolute paths of the
 *   TypeScript entry and its bundle, and the workspace package folders (under `packages/`) whose
 *   sources the bundle includes. The bundle must sit at the same depth under its package as the
 *   entry, so `import.meta.url`-relative paths in the sources stay valid.
 */
export async function runEntry({ entry, bundle, packages }) {
  if (process.env.SENDBOX_FROM_SOURCE !== '1') {
    if (isFresh(bundle, packages)) return import(pathToFileURL(bundle).href);
    try {
      mkdirSync(dirname(bundle), { recursive: true });
      await build(entry, bundle);
      return import(pathToFileURL(bundle).href);
    } catch {
      // Fall through to tsx: slower, same behaviour.
    }
  }
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(entry).href);
}
