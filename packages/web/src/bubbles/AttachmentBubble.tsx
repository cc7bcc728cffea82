/** An attachment send: a file card with its preview. */
import type { StoredAttachment } from '@sendbox/protocol';
import { FileCard } from '../FileCard.tsx';
import { sourceOf } from '../files.ts';

export function AttachmentBubble({ message }: { message: StoredAttachment }) {
  const fileName = message.file_name ?? fileNameFromUrl(message.url);
  return (
    <FileCard
      fileName={fileName}
      size={message.size}
      mediaType={message.media_type}
      alt={message.alt}
      source={sourceOf({ url: message.url, sha256: message.sha256 })}
    />
  );
}

function fileNameFromUrl(url: string): string {
  try {
    const last = new URL(url).pathname.split('/').filter(Boolean).pop();
    return last ? decodeURIComponent(last) : url;
  } catch {
    return url;
  }
}
