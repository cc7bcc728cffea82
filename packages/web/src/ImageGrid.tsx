/**
 * The images riding on a text send: a grid of whole images (never cropped or upscaled), the alt
 * text as their caption, as hover text and as the caption in the lightbox. https and inline data images are shown directly; ingested
 * files (`file://…/attachments/<sha256>`) are fetched with the token and shown from `blob:`
 * URLs; anything else becomes a labelled placeholder.
 */
import type { StoredImage } from '@sendbox/protocol';
import { memo, useContext } from 'react';
import { ConversationContext } from './conversation-context.ts';
import { useBlob, useImageUrl } from './FileCard.tsx';
import { mediaTypeOf, sourceOf } from './files.ts';
import { safeImageSrc } from './sanitize.ts';

function directSrc(url: string): string | null {
  if (/^https:\/\//i.test(url.trim())) return url.trim();
  return safeImageSrc(url);
}

export const ImageGrid = memo(function ImageGrid({ images }: { images: readonly StoredImage[] }) {
  return (
    <div className={`image-grid count-${Math.min(images.length, 4)}`} data-testid="image-grid">
      {images.map((image, index) => (
        <ImageTile key={index} image={image} index={index} />
      ))}
    </div>
  );
});

function ImageTile({ image, index }: { image: StoredImage; index: number }) {
  const direct = directSrc(image.url);
  const source = sourceOf({ url: image.url });
  const fetchable = !direct && source.kind === 'attachment';
  const { blob, error } = useBlob(source, fetchable);
  const fetched = useImageUrl(fetchable ? blob : null, mediaTypeOf(blob?.type, image.url));
  const src = direct ?? fetched.url;
  const caption = image.alt ?? '';
  const context = useContext(ConversationContext);
  if (!src) {
    const waiting = fetchable && !error && !fetched.error;
    return (
      <div className="image-missing" title={caption || undefined}>
        {waiting ? 'Loading image…' : `Image not viewable here${caption ? `: ${caption}` : ''}`}
      </div>
    );
  }
  return (
    <figure className="image-tile">
      <button
        type="button"
        className="image-button"
        onClick={() => context?.openLightbox({ src, caption })}
        aria-label={caption ? `View image: ${caption}` : `View image ${index + 1}`}
      >
        <img
          src={src}
          alt={caption}
          title={caption || undefined}
          loading="lazy"
          referrerPolicy="no-referrer"
          width={image.width}
          height={image.height}
        />
      </button>
      {caption && <figcaption data-testid="image-caption">{caption}</figcaption>}
    </figure>
  );
}
