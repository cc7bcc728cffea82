/**
 * Attachment bytes and what kind of preview a file gets. Bytes come from the gateway
 * (`/api/attachment` for ingested sends, `/api/upload` for user uploads, `/api/remoteImage`
 * for a remote image the user asked for) and are cached so re-rendering a bubble never
 * refetches.
 */
import type { ApiClient } from './api/client.ts';
import { sha256FromFileUrl } from './images.ts';

export type FileSource =
  | { kind: 'attachment'; sha256: string }
  | { kind: 'upload'; entryId: string }
  /**
   * An http(s) URL: the page links to it, and shows it as an image only through the gateway's
   * image proxy, on the user's request (RemoteImage.tsx); it never fetches it itself.
   */
  | { kind: 'remote'; url: string }
  | { kind: 'unavailable'; reason: string };

export type PreviewKind = 'image' | 'pdf' | 'docx' | 'xlsx' | 'none';

const EXTENSION_TYPES: Readonly<Record<string, string>> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  bmp: 'image/bmp',
  svg: 'image/svg+xml',
};

/** The media type to use: the recorded one, else guessed from the file name's extension. */
export function mediaTypeOf(mediaType: string | undefined, fileName: string): string {
  if (mediaType) return mediaType.toLowerCase().split(';')[0]!.trim();
  const extension = /\.([a-z0-9]+)$/i.exec(fileName)?.[1]?.toLowerCase() ?? '';
  return EXTENSION_TYPES[extension] ?? 'application/octet-stream';
}

/** SVG counts as an image: it is shown only after `displayableImage` rasterizes it. */
export function previewKindOf(mediaType: string): PreviewKind {
  if (/^image\/(png|jpeg|gif|webp|avif|bmp|svg\+xml)$/.test(mediaType)) return 'image';
  if (mediaType === 'application/pdf') return 'pdf';
  if (mediaType === EXTENSION_TYPES.docx) return 'docx';
  if (mediaType === EXTENSION_TYPES.xlsx) return 'xlsx';
  return 'none';
}

export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return 'size unknown';
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** Where an attachment's bytes are, from the fields a send or upload entry recorded. */
export function sourceOf(fields: { url?: string; sha256?: string; uploadEntryId?: string }): FileSource {
  if (fields.sha256 && /^[0-9a-f]{64}$/i.test(fields.sha256))
    return { kind: 'attachment', sha256: fields.sha256 };
  // An ingested file's stored URL names its hash even where the entry has no `sha256` (text images).
  const fromUrl = fields.url ? sha256FromFileUrl(fields.url) : null;
  if (fromUrl) return { kind: 'attachment', sha256: fromUrl };
  if (fields.uploadEntryId) return { kind: 'upload', entryId: fields.uploadEntryId };
  if (fields.url && /^https?:\/\//i.test(fields.url)) return { kind: 'remote', url: fields.url };
  return {
    kind: 'unavailable',
    reason: 'the file was not ingested by the box, so its bytes cannot be fetched',
  };
}

const MAX_CACHED = 24;
const cache = new Map<string, Promise<Blob>>();

/** The sources whose bytes the gateway serves. */
export type LoadableSource = Extract<FileSource, { kind: 'attachment' | 'upload' | 'remote' }>;

export function isLoadable(source: FileSource): source is LoadableSource {
  return source.kind === 'attachment' || source.kind === 'upload' || source.kind === 'remote';
}

/** What identifies a source's bytes within one agent (a remote image is the same for every agent). */
export function sourceKey(source: LoadableSource): string {
  return source.kind === 'attachment'
    ? source.sha256
    : source.kind === 'upload'
      ? source.entryId
      : source.url;
}

function fetchSource(client: ApiClient, agentId: string, source: LoadableSource): Promise<Blob> {
  switch (source.kind) {
    case 'attachment':
      return client.attachment(agentId, source.sha256);
    case 'upload':
      return client.upload(agentId, source.entryId);
    case 'remote':
      return client.remoteImage(source.url);
  }
}

/** Fetches (once) the bytes of a loadable source. */
export function loadBlob(client: ApiClient, agentId: string, source: LoadableSource): Promise<Blob> {
  const key = `${source.kind === 'remote' ? '' : agentId}\n${source.kind}\n${sourceKey(source)}`;
  let pending = cache.get(key);
  if (!pending) {
    pending = fetchSource(client, agentId, source);
    pending.catch(() => cache.delete(key)); // a failed fetch may be retried
    cache.set(key, pending);
    if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
  } else {
    // Move to the newest position (least recently used goes first).
    cache.delete(key);
    cache.set(key, pending);
  }
  return pending;
}
