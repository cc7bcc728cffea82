/**
 * Draws the app's icons (the PWA manifest's, `public/icons/`): a speech bubble on the accent
 * colour, as PNG at the sizes the manifest names, maskable-safe (the bubble keeps inside the
 * central 80%). Anti-aliased by 4×4 supersampling, encoded with node:zlib. Run it after changing
 * the shape: `npx tsx packages/web/scripts/icons.ts`; the PNGs are committed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const OUT = fileURLToPath(new URL('../public/icons/', import.meta.url));
const ACCENT = [0x24, 0x57, 0xd6] as const;
const WHITE = [0xff, 0xff, 0xff] as const;

/** Inside a rounded rectangle (unit coordinates). */
function inRoundedRect(
  x: number,
  y: number,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  r: number,
): boolean {
  if (x < x0 || x > x1 || y < y0 || y > y1) return false;
  const cx = Math.min(Math.max(x, x0 + r), x1 - r);
  const cy = Math.min(Math.max(y, y0 + r), y1 - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
}

/** Inside the triangle (a, b, c). */
function inTriangle(x: number, y: number, [a, b, c]: [number, number][]): boolean {
  const side = (p: [number, number], q: [number, number]) =>
    (q[0] - p[0]) * (y - p[1]) - (q[1] - p[1]) * (x - p[0]);
  const d1 = side(a!, b!);
  const d2 = side(b!, c!);
  const d3 = side(c!, a!);
  return !((d1 < 0 || d2 < 0 || d3 < 0) && (d1 > 0 || d2 > 0 || d3 > 0));
}

/** The bubble: a rounded body, a tail at the lower left, and three dots cut out of it. */
function bubble(x: number, y: number): boolean {
  const body = inRoundedRect(x, y, 0.22, 0.26, 0.78, 0.64, 0.1);
  const tail = inTriangle(x, y, [
    [0.3, 0.6],
    [0.44, 0.6],
    [0.27, 0.76],
  ]);
  if (!body && !tail) return false;
  const dot = [0.36, 0.5, 0.64].some((cx) => (x - cx) ** 2 + (y - 0.45) ** 2 <= 0.045 ** 2);
  return !dot;
}

function crc32(bytes: Buffer): number {
  let crc = ~0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

function png(size: number): Buffer {
  const SAMPLES = 4;
  const raw = Buffer.alloc(size * (size * 3 + 1));
  for (let py = 0; py < size; py++) {
    const row = py * (size * 3 + 1);
    raw[row] = 0; // filter: none
    for (let px = 0; px < size; px++) {
      let covered = 0;
      for (let sy = 0; sy < SAMPLES; sy++) {
        for (let sx = 0; sx < SAMPLES; sx++) {
          if (bubble((px + (sx + 0.5) / SAMPLES) / size, (py + (sy + 0.5) / SAMPLES) / size)) covered++;
        }
      }
      const share = covered / SAMPLES ** 2;
      for (let channel = 0; channel < 3; channel++) {
        raw[row + 1 + px * 3 + channel] = Math.round(
          ACCENT[channel]! * (1 - share) + WHITE[channel]! * share,
        );
      }
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

fs.mkdirSync(OUT, { recursive: true });
for (const size of [192, 512]) {
  const file = path.join(OUT, `icon-${size}.png`);
  fs.writeFileSync(file, png(size));
  console.log(`${file}: ${fs.statSync(file).size} bytes`);
}
