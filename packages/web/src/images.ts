/**
 * Images the page shows from fetched bytes. An SVG is drawn once onto a canvas and shown as
 * PNG: an SVG opened from a `blob:` URL (e.g. "open image in new tab") would run its scripts
 * with this page's origin, which is signed in to the API (its cookie). Raster images are safe
 * as they are.
 */

/** An ingested file's SHA-256 from its stored `file://` URL (`…/attachments/<sha256>[.ext]`). */
export function sha256FromFileUrl(url: string): string | null {
  if (!/^file:\/\//i.test(url)) return null;
  return /\/attachments\/([0-9a-f]{64})(?:\.[a-z0-9]+)?$/i.exec(url)?.[1]?.toLowerCase() ?? null;
}

export function isSvg(mediaType: string): boolean {
  return mediaType === 'image/svg+xml';
}

/** The blob to put in an `<img>`: raster images unchanged, SVG rasterized to PNG. */
export async function displayableImage(blob: Blob, mediaType: string): Promise<Blob> {
  if (!isSvg(mediaType) && blob.type !== 'image/svg+xml') return blob;
  const source = URL.createObjectURL(new Blob([blob], { type: 'image/svg+xml' }));
  try {
    const image = new Image();
    image.src = source;
    await image.decode();
    const scale = Math.min(2, 2048 / Math.max(image.naturalWidth || 300, image.naturalHeight || 150));
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round((image.naturalWidth || 300) * scale));
    canvas.height = Math.max(1, Math.round((image.naturalHeight || 150) * scale));
    canvas.getContext('2d')?.drawImage(image, 0, 0, canvas.width, canvas.height);
    return await new Promise<Blob>((resolve, reject) =>
      canvas.toBlob(
        (png) => (png ? resolve(png) : reject(new Error('the SVG could not be drawn'))),
        'image/png',
      ),
    );
  } finally {
    URL.revokeObjectURL(source);
  }
}
