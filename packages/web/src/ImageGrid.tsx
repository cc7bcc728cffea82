/**
 * The images riding on a text send: a grid of thumbnails, the alt text as hover text and as
 * the caption in the lightbox. https and inline data images are shown directly; anything else
 * (e.g. a `file://` path the browser cannot read) becomes a labelled placeholder.
 */
import type { StoredImage } from '@sendbox/protocol';
import { memo, useContext } from 'react';
import { ConversationContext } from './conversation-context.ts';
import { safeImageSrc } from './sanitize.ts';

function displayableSrc(url: string): string | null {
  if (/^https:\/\//i.test(url.trim())) return url.trim();
  return safeImageSrc(url);
}

export const ImageGrid = memo(function ImageGrid({ images }: { images: readonly StoredImage[] }) {
  const context = useContext(ConversationContext);
  return (
    <div className={`image-grid count-${Math.min(images.length, 4)}`} data-testid="image-grid">
      {images.map((image, index) => {
        const src = displayableSrc(image.url);
        const caption = image.alt ?? '';
        if (!src) {
          return (
            <div key={index} className="image-missing" title={caption || image.url}>
              Image not viewable here{caption ? `: ${caption}` : ''}
            </div>
          );
        }
        return (
          <button
            key={index}
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
        );
      })}
    </div>
  );
});
