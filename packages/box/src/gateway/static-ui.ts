/**
 * The web UI: `packages/web/dist` served at `/` and `/assets/*`. The HTML page
 * carries the bearer token, so it is never cached and is framed by nobody; asset
 * paths are resolved inside the dist folder only.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'hono';
import { errorResponse } from './errors.ts';
import { fileResponse } from './file-response.ts';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data: blob: https:",
  "style-src 'self' 'unsafe-inline'",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The placeholder the web build leaves in `index.html` for the gateway to fill. */
export const TOKEN_PLACEHOLDER = '__SENDBOX_TOKEN__';

const MEDIA_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
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

export class StaticUi {
  constructor(
    readonly root: string,
    private readonly token: string,
  ) {}

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
    // The token is base64url, so it needs no escaping inside an HTML attribute.
    const page = html.split(TOKEN_PLACEHOLDER).join(this.token);
    return c.body(page, 200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    });
  }

  async asset(c: Context, urlPath: string): Promise<Response> {
    const file = await resolveInside(this.root, urlPath);
    if (file === null || path.basename(file) === 'index.html') {
      return errorResponse(c, 404, `no such file: ${c.req.path}`);
    }
    // Vite names assets by content hash, so they never change under one URL.
    return fileResponse(file, mediaTypeOf(file), {
      'Cache-Control': 'public, max-age=31536000, immutable',
    });
  }
}
