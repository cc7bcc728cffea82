/**
 * The user's images of a continued session, as the box keeps uploads: files in the new agent's
 * content-addressed attachment store (`agents/<id>/attachments/<sha256>.<ext>`, as the box's own
 * AttachmentStore names them) and `user-attachment` bubbles pointing at them, so the continued
 * agent shows the screenshot the user once pasted, not a gap. Planned before the agent exists (the
 * ledger is checked first), written once its folder is known.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Block, Transcript } from '../model/common.ts';

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'image/bmp': 'bmp',
};

interface PlannedFile {
  /** `<sha256>.<ext>`, the store's name for these bytes. */
  name: string;
  bytes: Buffer;
}

export interface PlannedImages {
  files: PlannedFile[];
  /** The transcript with each user image an artifact at its file in `attachmentsDir`. */
  transcript(attachmentsDir: string): Transcript;
}

/** The user images (base64) of `transcript` and where they will be stored. */
export function planImages(transcript: Transcript): PlannedImages {
  const files = new Map<string, PlannedFile>();
  const plan: { message: number; block: number; file: PlannedFile; mediaType: string; n: number }[] = [];
  let n = 0;
  transcript.messages.forEach((message, m) => {
    if (message.role !== 'user') return;
    message.content.forEach((block, b) => {
      if (block.type !== 'image' || block.source.type !== 'base64') return;
      const bytes = Buffer.from(block.source.data, 'base64');
      if (bytes.byteLength === 0) return;
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const ext = EXTENSIONS[block.source.media_type] ?? 'bin';
      const name = `${sha256}.${ext}`;
      const file = files.get(name) ?? { name, bytes };
      files.set(name, file);
      plan.push({ message: m, block: b, file, mediaType: block.source.media_type, n: ++n });
    });
  });
  return {
    files: [...files.values()],
    transcript(attachmentsDir) {
      if (plan.length === 0) return transcript;
      const messages = transcript.messages.map((message) => ({ ...message, content: [...message.content] }));
      for (const p of plan) {
        const ext = p.file.name.slice(p.file.name.indexOf('.') + 1);
        const artifact: Block = {
          type: 'artifact',
          artifact: {
            id: p.file.name.slice(0, 16),
            name: `image-${p.n}.${ext}`,
            source: { type: 'path', path: join(attachmentsDir, p.file.name), media_type: p.mediaType },
          },
        };
        messages[p.message]!.content[p.block] = artifact;
      }
      return { ...transcript, messages };
    },
  };
}

/** Writes the planned files into `attachmentsDir` (0700), each 0600 through a temp file and a rename. */
export async function writePlannedImages(images: PlannedImages, attachmentsDir: string): Promise<void> {
  if (images.files.length === 0) return;
  await mkdir(attachmentsDir, { recursive: true, mode: 0o700 });
  for (const file of images.files) {
    const target = join(attachmentsDir, file.name);
    const temp = `${target}.${process.pid}.tmp`;
    try {
      await writeFile(temp, file.bytes, { mode: 0o600, flush: true });
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }
}
