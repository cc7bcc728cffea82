/**
 * The images riding on a text send: a grid of whole images (never cropped or upscaled), the alt
 * text as their caption, as hover text and as the caption in the lightbox. Inline data images
 * are shown directly; ingested files (`file://…/attachments/<sha256>`) are fetched from the
 * gateway and shown from `blob:` URLs; remote (http/https) images wait behind a placeholder
 * until the user loads them through the gateway (RemoteImage.tsx); anything else becomes a
 * labelled placeholder.
 */
import type { StoredImage } from '@sendbox/protocol';
import { memo, useContext } from 'react';
import { ConversationContext } from './conversation-context.ts';
import { useBlob, useImageUrl } from './FileCard.tsx';
import { mediaTypeOf, sourceOf } from './files.ts';
import { RemoteImage } from './RemoteImage.tsx';
import { safeImageSrc } from './sanitize.ts';

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
  const source = sourceOf({ url: image.url });
  if (source.kind !== 'remote') return <LocalImageTile image={image} index={index} />;
  return (
    <RemoteImage url={source.url} alt={image.alt ?? ''}>
      {(src) => <TileButton src={src} image={image} index={index} />}
    </RemoteImage>
  );
}

function LocalImageTile({ image, index }: { image: StoredImage; index: number }) {
  const direct = safeImageSrc(image.url);
  const source = sourceOf({ url: image.url });
  const fetchable = !direct && source.kind === 'attachment';
  const { blob, error } = useBlob(source, fetchable);
  const fetched = useImageUrl(fetchable ? blob : null, mediaTypeOf(blob?.type, image.url));
  const src = direct ?? fetched.url;
  const caption = image.alt ?? '';
  if (!src) {
    const waiting = fetchable && !error && !fetched.error;
    return (
      <div className="image-missing" title={caption || undefined}>
        {waiting ? 'Loading image…' : `Image not viewable here${caption ? `: ${caption}` : ''}`}
      </div>
    );
  }
  return <TileButton src={src} image={image} index={index} />;
}

function TileButton({ src, image, index }: { src: string; image: StoredImage; index: number }) {
  const context = useContext(ConversationContext);
  const caption = image.alt ?? '';
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
