/**
 * The files backend (Grok Bot's layout, stores/files/layout.ts): the ledger and the inbox in the
 * agent's store.db, the transcript in its JSONL, attachments and secrets beside them, the sandbox
 * under `sandboxes/<id>/`. One box process per data dir (cli/data-dir-lock.ts).
 */
import { mkdir } from 'node:fs/promises';
import { AttachmentStore } from '../../attachments/store.ts';
import { ensurePrivateDir } from '../../fs/atomic.ts';
import { SecretStore } from '../../secrets/store.ts';
import type { TranscriptLog } from '../transcript.ts';
import {
  childTranscripts,
  type AgentStores,
  type ProfileSource,
  type StoreBackend,
} from '../agent-stores.ts';
import type { WritePoints } from '../write-points.ts';
import { fileMark, sameFile, type FileMark } from './file-mark.ts';
import { Inbox } from './inbox.ts';
import { JsonlFile } from './jsonl.ts';
import { agentPaths } from './layout.ts';
import { openFileLedger } from './ledger.ts';
import { readProfile, writeProfile } from './profile.ts';
import { StoreLock } from './store-lock.ts';

export interface FilesBackendOptions {
  dataDir: string;
  /** The secret stores' key (keys/secrets.key). */
  secretKey: Buffer;
  maxAttachmentBytes: number;
  writePoints: WritePoints;
}

export function filesStoreBackend(options: FilesBackendOptions): StoreBackend {
  return { open: (agentId) => openFileStores(agentId, options) };
}

async function openFileStores(id: string, options: FilesBackendOptions): Promise<AgentStores> {
  const paths = agentPaths(options.dataDir, id);
  await ensurePrivateDir(paths.agentDir);
  await ensurePrivateDir(paths.transcriptDir);
  await mkdir(paths.sandbox, { recursive: true, mode: 0o700 });
  const profile = profileFile(paths.profile);
  // The profile first: a missing or bad one fails the open before store.db is created.
  await profile.read();
  const lock = new StoreLock(paths.storeDb);
  const ledger = openFileLedger(paths.storeDb, lock);
  const storeIno = fileMark(paths.storeDb)?.ino ?? 0;
  const transcript = new JsonlFile(paths.jsonl);
  const inbox = new Inbox(paths.storeDb, lock, options.writePoints);
  return {
    ledger,
    transcript,
    inbox,
    attachments: new AttachmentStore(paths.attachments, options.maxAttachmentBytes),
    secrets: new SecretStore(paths.secrets, options.secretKey, id),
    profile,
    focus: lock,
    local: paths,
    childTranscript: fileChildTranscripts(options.dataDir),
    replaced: () => fileMark(paths.storeDb)?.ino !== storeIno,
    close() {
      lock.release();
      transcript.close();
      inbox.close();
      ledger.close();
    },
  };
}

/**
 * The subagents' JSONL files of the data dir (`AgentStores.childTranscript` on files):
 * `agent-transcripts/<child>/<child>.jsonl`, as Grok Bot keeps them. A child's folder is made by its
 * first append, so reading or closing a child that never wrote leaves nothing behind.
 */
export function fileChildTranscripts(dataDir: string): (childId: string) => Promise<TranscriptLog> {
  return childTranscripts(
    (childId) => new JsonlFile(agentPaths(dataDir, childId).jsonl, { makeFolder: true }),
  );
}

/** profile.json, read again only when its inode, size or mtime changed (the operator edits it by hand). */
function profileFile(file: string): ProfileSource {
  let mark: FileMark | null = null;
  return {
    async read() {
      const next = fileMark(file);
      const profile = await readProfile(file);
      mark = next;
      return profile;
    },
    changed: () => !sameFile(mark, fileMark(file)),
    write: (profile) => writeProfile(file, profile),
  };
}
