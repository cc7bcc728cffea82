/**
 * Files the gateway streams back: ingested attachments (by SHA-256) and user
 * uploads (by their `user-attachment` entry). Whatever a ledger entry says, a
 * served file is opened beneath one of the agent's own folders without
 * following a link at any component, with O_NONBLOCK, and must be a regular
 * file (`openInSandbox`); anything else is a 404. The response streams from
 * that open handle, never from the path again, so an agent that swaps its
 * sandbox file for a link or a FIFO after the check gains nothing: a crafted
 * entry cannot read the disk, and a pipe cannot stall the gateway.
 */
import path from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { AttachmentStore } from '../attachments/store.ts';
import { agentPaths } from '../stores/files/layout.ts';
import type { AgentHost } from '../host/types.ts';
import { HostError } from '../agent/errors.ts';
import { mediaTypeOf } from '../attachments/media-type.ts';
import { openInSandbox, type OpenedFile } from '../sandbox/paths.ts';

export interface ServedFile {
  /** Open for reading; whoever takes it closes it (the response does, when the body ends or is cancelled). */
  handle: FileHandle;
  size: number;
  mediaType: string;
  fileName: string;
}

export interface AgentFiles {
  attachment(agentId: string, sha256: string): Promise<ServedFile>;
  upload(agentId: string, entryId: string): Promise<ServedFile>;
}

export interface AgentFolders {
  /** Folders whose files may be served for this agent: never its ledger or secret store. */
  roots(agentId: string): string[];
  /** The content-addressed attachment folder of this agent. */
  attachmentsDir(agentId: string): string;
  /** The folder a relative `user-attachment` `file_path` is relative to. */
  sandboxDir(agentId: string): string;
}

/** The box's layout: attachments and the sandbox are served; `store.db`, `secrets.enc`, `profile.json` never. */
export function boxAgentFolders(dataDir: string): AgentFolders {
  return {
    roots: (id) => {
      const paths = agentPaths(dataDir, id);
      return [paths.attachments, paths.sandbox];
    },
    attachmentsDir: (id) => agentPaths(dataDir, id).attachments,
    sandboxDir: (id) => agentPaths(dataDir, id).sandbox,
  };
}

/** The file opened beneath the first of `roots` that holds it, or null (missing, a link, not a regular file). */
async function openInside(roots: string[], candidate: string): Promise<OpenedFile | null> {
  for (const root of roots) {
    // (`openInSandbox` refuses a path outside `root`, by the path as given or by the real one.)
    const opened = await openInSandbox(root, candidate).catch(() => null);
    if (opened !== null) return opened;
  }
  return null;
}

/** A `file_path` as recorded: absolute, relative to the sandbox, or a `file://` URL. */
function recordedPath(recorded: string, sandboxDir: string): string {
  if (!recorded.startsWith('file:')) return path.resolve(sandboxDir, recorded);
  try {
    return fileURLToPath(recorded);
  } catch {
    return '';
  }
}

function served(file: OpenedFile, mediaType: string, fileName: string): ServedFile {
  return { handle: file.handle, size: file.info.size, mediaType, fileName };
}

function notFound(what: string): HostError {
  return new HostError(what, 404);
}

export function agentFiles(host: AgentHost, folders: AgentFolders): AgentFiles {
  /** The agent's stored copy of `sha256`, opened; a cluster worker that never held it brings it from the bucket (checked by its hash). */
  const storedCopy = async (agentId: string, sha256: string): Promise<OpenedFile | null> => {
    const copies = new AttachmentStore(folders.attachmentsDir(agentId));
    let stored = await copies.find(sha256);
    if (stored === null && (await host.fetchAttachment?.(agentId, sha256)))
      stored = await copies.find(sha256);
    return stored === null ? null : await openInside(folders.roots(agentId), stored);
  };
  return {
    async attachment(agentId, sha256) {
      const file = await storedCopy(agentId, sha256);
      if (file === null) throw notFound(`agent ${agentId} has no attachment ${sha256}`);
      return served(file, mediaTypeOf(file.path), path.basename(file.path));
    },
    async upload(agentId, entryId) {
      const entry = await host.entryById(agentId, entryId);
      if (entry === undefined || entry.kind !== 'user-attachment') {
        throw notFound(`agent ${agentId} has no upload entry ${entryId}`);
      }
      // The recorded path is the accepting box's; another cluster worker has the copy under its hash.
      const file =
        (await openInside(
          folders.roots(agentId),
          recordedPath(entry.file_path, folders.sandboxDir(agentId)),
        )) ??
        (typeof entry.sha256 === 'string' && /^[0-9a-f]{64}$/.test(entry.sha256)
          ? await storedCopy(agentId, entry.sha256)
          : null);
      if (file === null) {
        throw notFound(`the file of upload ${entryId} is gone or outside agent ${agentId}'s folders`);
      }
      return served(file, entry.media_type ?? mediaTypeOf(entry.file_name), entry.file_name);
    },
  };
}
