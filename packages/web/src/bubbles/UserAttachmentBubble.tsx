/** A file the user uploaded: the same file card, its bytes from `/api/upload`. */
import type { UserAttachmentEntry } from '@sendbox/protocol';
import { FileCard } from '../FileCard.tsx';
import { sourceOf } from '../files.ts';

export function UserAttachmentBubble({ entry }: { entry: UserAttachmentEntry }) {
  return (
    <FileCard
      fileName={entry.file_name}
      size={entry.byteSize}
      mediaType={entry.media_type}
      source={sourceOf({ uploadEntryId: entry.id })}
    />
  );
}
