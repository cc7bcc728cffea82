/**
 * A sandbox snapshot's manifest (issue 25 §4): every folder, regular file and symbolic link of an
 * agent's sandbox, by its path relative to the sandbox, with its mode; a file by the SHA-256 of its
 * bytes (its blob in the bucket), a link by its target. Nothing else (FIFOs, sockets, devices) is kept.
 *
 * A manifest is read from the bucket, which the box does not own alone, so `parseManifest` trusts
 * none of it: a path that is absolute, holds `..`, `.`, an empty component or a NUL, an entry whose
 * folder is not a folder of the manifest (a file "inside" a link would be written through the link),
 * or a path given twice is refused before anything is written. The text is canonical (entries sorted,
 * no time in it), so an unchanged sandbox gives the same manifest and the same hash.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

export const MANIFEST_FORMAT = 'sendbox-sandbox-snapshot';
const MAX_PATH = 4096;
const SHA256 = /^[0-9a-f]{64}$/;

export type ManifestEntry =
  | { path: string; type: 'dir'; mode: number }
  | { path: string; type: 'file'; mode: number; size: number; mtimeMs: number; sha256: string }
  | { path: string; type: 'symlink'; target: string };

export interface Manifest {
  agentId: string;
  /** Sorted by path, so a folder comes before what it holds. */
  entries: ManifestEntry[];
}

/** Why a manifest was refused: the entry and the rule, and that nothing was restored from it. */
export class ManifestError extends Error {
  constructor(where: string, what: string) {
    super(
      `sandbox snapshot manifest ${where}: ${what}; nothing was restored from it (the manifest was changed outside the box: take the agent's sandbox from a backup, or remove its snapshot row to start from the worker's own folder)`,
    );
    this.name = 'ManifestError';
  }
}

const relativePath = z
  .string()
  .min(1)
  .max(MAX_PATH)
  .superRefine((text, ctx) => {
    const fail = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (text.includes('\0')) return fail('holds a NUL');
    if (text.startsWith('/')) return fail('is absolute');
    for (const part of text.split('/')) {
      if (part === '') return fail('has an empty component');
      if (part === '.' || part === '..') return fail(`has a ${JSON.stringify(part)} component`);
    }
  });

// Permission bits and the sticky bit; set-user-id and set-group-id are never restored.
const mode = z
  .number()
  .int()
  .min(0)
  .max(0o7777)
  .transform((bits) => bits & 0o1777);

const entrySchema = z.discriminatedUnion('type', [
  z.strictObject({ path: relativePath, type: z.literal('dir'), mode }),
  z.strictObject({
    path: relativePath,
    type: z.literal('file'),
    mode,
    size: z.number().int().min(0),
    mtimeMs: z.number().finite(),
    sha256: z.string().regex(SHA256, 'is not a SHA-256 in hex'),
  }),
  z.strictObject({
    path: relativePath,
    type: z.literal('symlink'),
    target: z
      .string()
      .min(1)
      .max(MAX_PATH)
      .refine((target) => !target.includes('\0'), 'holds a NUL'),
  }),
]);

const manifestSchema = z.strictObject({
  format: z.literal(MANIFEST_FORMAT),
  version: z.literal(1),
  agentId: z.string().min(1),
  entries: z.array(entrySchema),
});

/** The canonical text of a manifest (entries sorted by path). */
export function manifestText(manifest: Manifest): string {
  const entries = [...manifest.entries].sort((a, b) => comparePaths(a.path, b.path));
  return JSON.stringify({ format: MANIFEST_FORMAT, version: 1, agentId: manifest.agentId, entries });
}

export function sha256Hex(bytes: string | Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Byte order of the UTF-8 paths, so every worker sorts alike. */
export function comparePaths(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * Reads and checks a manifest (`where` names it in errors): the shape, every path, that each entry's
 * folder is a folder of the manifest, no path twice, and that it is the agent's own.
 */
export function parseManifest(text: string, agentId: string, where: string): Manifest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ManifestError(where, `not JSON (${(error as Error).message})`);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issue.path.length > 0 ? issue.path.join('.') : '(top)';
    const entry =
      issue.path[0] === 'entries' ? (json as { entries: unknown[] }).entries[Number(issue.path[1])] : null;
    const named =
      entry && typeof entry === 'object' && 'path' in entry ? ` (path ${JSON.stringify(entry.path)})` : '';
    throw new ManifestError(where, `${at}${named} ${issue.message}`);
  }
  const manifest = parsed.data;
  if (manifest.agentId !== agentId) {
    throw new ManifestError(where, `it is agent ${manifest.agentId}'s, not ${agentId}'s`);
  }
  const kinds = new Map<string, ManifestEntry['type']>();
  for (const entry of manifest.entries) {
    if (kinds.has(entry.path)) throw new ManifestError(where, `${JSON.stringify(entry.path)} is given twice`);
    kinds.set(entry.path, entry.type);
  }
  for (const entry of manifest.entries) {
    const slash = entry.path.lastIndexOf('/');
    if (slash === -1) continue;
    const parent = entry.path.slice(0, slash);
    if (kinds.get(parent) !== 'dir') {
      throw new ManifestError(
        where,
        `${JSON.stringify(entry.path)} lies in ${JSON.stringify(parent)}, which the manifest does not give as a folder`,
      );
    }
  }
  return { agentId, entries: [...manifest.entries].sort((a, b) => comparePaths(a.path, b.path)) };
}
