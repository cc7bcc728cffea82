/** A text send: sanitized Markdown, then the images that ride on it as a grid. */
import type { StoredText } from '@sendbox/protocol';
import { ImageGrid } from '../ImageGrid.tsx';
import { Markdown } from '../markdown.tsx';

export function TextBubble({ message }: { message: StoredText }) {
  return (
    <>
      {message.content !== '' && <Markdown text={message.content} />}
      {message.images && message.images.length > 0 && <ImageGrid images={message.images} />}
    </>
  );
}
