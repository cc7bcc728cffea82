/**
 * The web UI: `packages/web/dist` served at `/` and `/assets/*`, and the few files an installed
 * app needs at the root (`PUBLIC_FILES`: the manifest, the service worker, its offline page and the
 * icons; none holds anything private, so they need no session). The page holds no
 * secret (the browser is signed in by an HttpOnly cookie, session.ts); it is served
 * only to a signed-in browser, never cached and framed by nobody, and its CSP keeps
 * model output from reaching the network: images come from this origin, `data:` or
 * `blob:` only (remote ones through the image proxy, image-proxy.ts). Asset paths
 * are resolved inside the dist folder only.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'hono';
import { errorResponse } from './errors.ts';
import { fileResponse } from './file-response.ts';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data: blob:",
  "style-src 'self' 'unsafe-inline'",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "form-action 'none'",
  "base-uri 'none'",
].join('; ');

/** The page a browser without a session gets, and the answer to a dead login link: no script, no token. */
const SIGN_IN_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

/** `loginCommand`: how the user's shell runs `sendbox login`, escaped here (it holds a path). */
export function signInPage(
  c: Context,
  status: 200 | 401 | 403,
  problem: string | null,
  loginCommand = 'sendbox login',
): Response {
  const lead =
    problem === null ? '<p>This browser is not signed in to this sendbox.</p>' : `<p>${problem}</p>`;
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>sendbox: sign in</title>' +
    '<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}' +
    'code{background:#8882;padding:0 .25em;border-radius:4px}</style></head><body>' +
    `<h1>Sign in to sendbox</h1>${lead}` +
    '<p>Open the login link that <code>sendbox serve</code> printed in its terminal, or run ' +
    `<code>${escapeHtml(loginCommand)}</code> for a fresh link. ` +
    'A link works once, for a few minutes.</p></body></html>';
  return c.body(html, status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Security-Policy': SIGN_IN_CSP,
  });
}

const MEDIA_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
  '.pdf': 'application/pdf',
  '.bcmap': 'application/octet-stream',
};

export function mediaTypeOf(fileName: string): string {
  return MEDIA_TYPES[path.extname(fileName).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * The file a URL path names inside `root`, or null if it would leave `root`
 * (`..`, encoded separators, NUL, absolute paths, symlinks pointing out).
 */
export async function resolveInside(root: string, urlPath: string): Promise<string | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const segments = decoded.split('/').filter((segment) => segment !== '');
  if (segments.some((segment) => segment === '.' || segment === '..')) return null;
  const realRoot = await fsp.realpath(root).catch(() => null);
  if (realRoot === null) return null;
  const candidate = path.join(realRoot, ...segments);
  const real = await fsp.realpath(candidate).catch(() => null);
  if (real === null || !real.startsWith(realRoot + path.sep)) return null;
  const stat = await fsp.stat(real).catch(() => null);
  return stat?.isFile() === true ? real : null;
}

/** The offline page is static text: no script, no network. */
const OFFLINE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'";

/**
 * The root files of `packages/web/public/` the gateway serves, and how. Their names are fixed (a
 * manifest and a service worker are found by their URL), so they are revalidated on each use; the
 * service worker's byte-for-byte check is what updates an installed app.
 */
export const PUBLIC_FILES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  '/manifest.webmanifest': { 'Cache-Control': 'no-cache' },
  '/sw.js': { 'Cache-Control': 'no-cache' },
  '/offline.html': { 'Cache-Control': 'no-cache', 'Content-Security-Policy': OFFLINE_CSP },
  '/icons/icon-192.png': { 'Cache-Control': 'public, max-age=86400' },
  '/icons/icon-512.png': { 'Cache-Control': 'public, max-age=86400' },
};

export class StaticUi {
  constructor(readonly root: string) {}

  get built(): boolean {
    return fs.existsSync(path.join(this.root, 'index.html'));
  }

  async page(c: Context): Promise<Response> {
    let html: string;
    try {
      html = await fsp.readFile(path.join(this.root, 'index.html'), 'utf8');
    } catch {
      return c.text(
        `The web UI is not built (no ${path.join(this.root, 'index.html')}).\n` +
          'Run `npm run build -w @sendbox/web`, or start the box with `npm start`, which builds it.\n',
        503,
        { 'Cache-Control': 'no-store' },
      );
    }
    return c.body(html, 200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    });
  }

  async asset(c: Context, urlPath: string): Promise<Response> {
    // Vite names assets by content hash, so they never change under one URL.
    return this.serve(c, urlPath, { 'Cache-Control': 'public, max-age=31536000, immutable' });
  }

  /** One of `PUBLIC_FILES`, with its headers. */
  async publicFile(c: Context, urlPath: keyof typeof PUBLIC_FILES): Promise<Response> {
    return this.serve(c, urlPath, PUBLIC_FILES[urlPath] ?? {});
  }

  private async serve(
    c: Context,
    urlPath: string,
    headers: Readonly<Record<string, string>>,
  ): Promise<Response> {
    const file = await resolveInside(this.root, urlPath);
    if (file === null || path.basename(file) === 'index.html') {
      return errorResponse(c, 404, `no such file: ${c.req.path}`);
    }
    const handle = await fsp.open(file, 'r');
    let size: number;
    try {
      size = (await handle.stat()).size;
    } catch (error) {
      await handle.close();
      throw error;
    }
    return fileResponse({ handle, size }, mediaTypeOf(file), headers, c.req.method);
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
