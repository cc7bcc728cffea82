/**
 * Continuing a Grok Bot agent into a new one (`txcript continue <agent> --with grok_bot`): the new
 * agent's UI ledger is the source's own entries, not a rebuild from Common. Common keeps neither a
 * widget (the JSONL holds its text summary, C9), nor an answer's link to its question, nor the time
 * of every entry; the ledger has all three. So the copy reads like the original: user bubbles hold
 * what the user typed, answers stay answers (`replyTo`, `respondedValue`, `widgetSkipped`), each
 * entry keeps its `timestampMs`, and secret requests show as saved (the secret itself lives in the
 * source's secret store and is never read).
 *
 * Files the entries point at inside the source's attachment store (`agents/<id>/attachments/`)
 * are copied into the new agent's store under the same content-addressed name, and the entries
 * are pointed at the copies, so cards and previews work there. Files elsewhere are left as
 * references. Entries the box could not write (kinds and types outside the protocol, abandoned
 * branches) are left out with a warning; the source keeps them.
 */
import { constants } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { basename, join, relative, isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ledgerEntrySchema, type LedgerEntry } from '@sendbox/protocol';
import { isJsonObject } from '../model/json.ts';
import type { JsonObject, JsonValue } from '../model/common.ts';
import { openLedgerReadOnly } from '../harness/grok-bot/ledger-db.ts';
import type { ReadLedgerEntry } from '../harness/grok-bot/ledger-entry.ts';

export interface SourceLedger {
  /** The source agent's folder (`agents/<id>`). */
  agentDir: string;
  entries: readonly ReadLedgerEntry[];
}

/** The source agent's ledger entries, or undefined when it has no readable, non-empty store.db. */
export function readSourceLedger(agentDir: string): SourceLedger | undefined {
  let ledger;
  try {
    ledger = openLedgerReadOnly(join(agentDir, 'store.db'));
  } catch {
    return undefined;
  }
  try {
    const { rows } = ledger.readLedgerEntries();
    return rows.length === 0 ? undefined : { agentDir, entries: rows.map((r) => r.entry) };
  } finally {
    ledger.close();
  }
}

export interface CopiedLedger {
  entries: LedgerEntry[];
  /** Epoch ms of the last entry, for `kv unreadState`. */
  lastActivityAt: number;
  /** Files copied into the new agent's attachment store. */
  files: number;
  /** What was left out, one line each. */
  left: string[];
}

/** The path a `file://` URL or plain path names, when it lies inside `dir`; otherwise undefined. */
function insideDir(ref: string, dir: string): string | undefined {
  let path: string;
  try {
    path = ref.startsWith('file:') ? fileURLToPath(ref) : ref;
  } catch {
    return undefined;
  }
  if (!isAbsolute(path)) return undefined;
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? path : undefined;
}

/**
 * The source's entries for a new agent whose folder is `targetDir`, with their files copied.
 * Nothing is written to the new ledger here (the mint does that in one transaction).
 */
export async function copyLedger(source: SourceLedger, targetDir: string): Promise<CopiedLedger> {
  const fromDir = join(source.agentDir, 'attachments');
  const toDir = join(targetDir, 'attachments');
  const copied = new Map<string, string>();
  const left: string[] = [];

  /** The new agent's copy of a file in the source's attachment store (`ref` as it was, for others). */
  const relocate = async (ref: string, asUrl: boolean): Promise<string> => {
    const path = insideDir(ref, fromDir);
    if (path === undefined) return ref;
    let target = copied.get(path);
    if (target === undefined) {
      target = join(toDir, basename(path));
      await mkdir(toDir, { recursive: true, mode: 0o700 });
      try {
        // Content-addressed names: a file already there is the same file.
        await copyFile(path, target, constants.COPYFILE_EXCL);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          left.push(`${path} is gone from the source agent; its card will say so`);
          return ref;
        }
        if (code !== 'EEXIST') throw error;
      }
      copied.set(path, target);
    }
    return asUrl ? pathToFileURL(target).href : target;
  };

  const entries: LedgerEntry[] = [];
  let lastActivityAt = 0;
  for (const read of source.entries) {
    const entry: JsonObject = { ...(read as unknown as JsonObject) };
    delete entry.seq;
    if (entry.branched === true || entry.branched === 1) continue;
    if (entry.kind === 'user-attachment') {
      if (typeof entry.file_path === 'string') entry.file_path = await relocate(entry.file_path, false);
      // The source's sandbox is not the new agent's.
      delete entry.sandbox_path;
    } else if (entry.kind === 'send-message' && isJsonObject(entry.message)) {
      const message: JsonObject = { ...entry.message };
      if (typeof message.url === 'string') message.url = await relocate(message.url, true);
      if (Array.isArray(message.images)) {
        const images: JsonValue[] = [];
        for (const image of message.images) {
          images.push(
            isJsonObject(image) && typeof image.url === 'string'
              ? { ...image, url: await relocate(image.url, true) }
              : image,
          );
        }
        message.images = images;
      }
      entry.message = message;
    }
    const parsed = ledgerEntrySchema.safeParse(entry);
    if (!parsed.success) {
      const type = isJsonObject(entry.message) ? ` ${JSON.stringify(entry.message.type)}` : '';
      left.push(
        `entry ${JSON.stringify(entry.id)} (${JSON.stringify(entry.kind)}${type}) is not one the box writes; left out`,
      );
      continue;
    }
    entries.push(parsed.data);
    lastActivityAt = Math.max(lastActivityAt, parsed.data.timestampMs);
  }
  return { entries, lastActivityAt, files: copied.size, left };
}
