/**
 * Files the gateway streams back: ingested attachments (by SHA-256) and user
 * uploads (by their `user-attachment` entry). Whatever a ledger entry says, a
 * served path must resolve (symlinks followed) inside one of the agent's own
 * folders; anything else is a 404, so a crafted entry cannot read the disk.
 */
import path from 'node:path';
import { realpath, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { AttachmentStore } from '../attachments/store.ts';
import { agentPaths } from '../host/layout.ts';
import type { AgentHost } from '../host/types.ts';
import { HostError } from '../host/types.ts';
import { mediaTypeOf } from '../attachments/media-type.ts';

export interface ServedFile {
  path: string;
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

async function realInside(roots: string[], candidate: string): Promise<string | null> {
  const real = await realpath(candidate).catch(() => null);
  if (real === null) return null;
  for (const root of roots) {
    const realRoot = await realpath(root).catch(() => null);
    if (realRoot === null) continue;
    const rel = path.relative(realRoot, real);
    if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)) {
      const info = await stat(real);
      return info.isFile() ? real : null;
    }
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

function notFound(what: string): HostError {
  return new HostError(what, 404);
}

export function agentFiles(host: AgentHost, folders: AgentFolders): AgentFiles {
  return {
    async attachment(agentId, sha256) {
      const stored = await new AttachmentStore(folders.attachmentsDir(agentId)).find(sha256);
      const file = stored === null ? null : await realInside(folders.roots(agentId), stored);
      if (file === null) throw notFound(`agent ${agentId} has no attachment ${sha256}`);
      return { path: file, mediaType: mediaTypeOf(file), fileName: path.basename(file) };
    },
    async upload(agentId, entryId) {
      const entry = await host.entryById(agentId, entryId);
      if (entry === undefined || entry.kind !== 'user-attachment') {
        throw notFound(`agent ${agentId} has no upload entry ${entryId}`);
      }
      const file = await realInside(
        folders.roots(agentId),
        recordedPath(entry.file_path, folders.sandboxDir(agentId)),
      );
      if (file === null) {
        throw notFound(`the file of upload ${entryId} is gone or outside agent ${agentId}'s folders`);
      }
      return {
        path: file,
        mediaType: entry.media_type ?? mediaTypeOf(entry.file_name),
        fileName: entry.file_name,
      };
    },
  };
}
