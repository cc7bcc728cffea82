/**
 * Images as the model gets them: decoded and re-encoded by sharp, turned upright by their EXIF
 * orientation, scaled down to at most IMAGE_MAX_SIDE px on the long side (the size vision models
 * work at; larger costs tokens and shows no more). PNG, JPEG and WebP keep their format; a GIF
 * becomes a PNG of its first frame (providers refuse animated GIFs).
 */
import sharp from 'sharp';

export const IMAGE_MAX_SIDE = 1568;
/** Larger sources are refused before decoding (a decompression bomb). */
const MAX_INPUT_PIXELS = 100_000_000;

export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** The image type of `bytes` by their magic numbers (never by file name), or null. */
export function imageTypeOf(bytes: Uint8Array): ImageMediaType | null {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 16));
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 6 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a'))
    return 'image/gif';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP')
    return 'image/webp';
  return null;
}

export interface ModelImage {
  /** Base64 of the encoded image. */
  data: string;
  mediaType: 'image/png' | 'image/jpeg' | 'image/webp';
  width: number;
  height: number;
  originalWidth: number;
  originalHeight: number;
}

export async function imageForModel(bytes: Uint8Array, type: ImageMediaType): Promise<ModelImage> {
  const source = sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, animated: false, failOn: 'error' });
  const meta = await source.metadata();
  let pipeline = source
    .rotate()
    .resize({ width: IMAGE_MAX_SIDE, height: IMAGE_MAX_SIDE, fit: 'inside', withoutEnlargement: true });
  let mediaType: ModelImage['mediaType'];
  if (type === 'image/jpeg') {
    pipeline = pipeline.jpeg({ quality: 85, mozjpeg: true });
    mediaType = 'image/jpeg';
  } else if (type === 'image/webp') {
    pipeline = pipeline.webp({ quality: 85 });
    mediaType = 'image/webp';
  } else {
    pipeline = pipeline.png({ compressionLevel: 6 });
    mediaType = 'image/png';
  }
  const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
  // EXIF orientations 5–8 swap the sides.
  const swapped = (meta.orientation ?? 1) >= 5;
  return {
    data: data.toString('base64'),
    mediaType,
    width: info.width,
    height: info.height,
    originalWidth: (swapped ? meta.height : meta.width) ?? info.width,
    originalHeight: (swapped ? meta.width : meta.height) ?? info.height,
  };
}
