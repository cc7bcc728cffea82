/**
 * `read`: a file inside the sandbox. Text, optionally a line window (`offset` is 1-based, `limit`
 * lines); an image (PNG, JPEG, GIF, WebP, known by its bytes) as an image the model sees, scaled
 * to at most 1568 px (read/image.ts); a PDF as its text page by page, `offset`/`limit` counted in
 * pages (read/pdf.ts).
 */
import type { JsonValue } from '@sendbox/txcript';
import { z } from 'zod';
import { openInSandbox, withDeadline } from '../../sandbox/paths.ts';
import type { Scrubber } from '../../secrets/scrub.ts';
import { readLineWindow } from './line-window.ts';
import { imageForModel, imageTypeOf, type ImageMediaType } from './image.ts';
import { isPdf, pdfText } from './pdf.ts';
import {
  defineTool,
  errorOutcome as anyErrorOutcome,
  successFields,
  type ToolModelOutput,
  type ToolOutcome,
} from '../types.ts';

/** Real read errors are `{error: {errorMessage}}` (grok-bot-format.md §5, VR parity 06). */
const errorOutcome = (message: string): ToolOutcome => anyErrorOutcome(message, message, 'errorMessage');

export const READ_CAP_BYTES = 256 * 1024;
/** Largest image or PDF file read (the model gets a scaled image, or text). */
export const READ_MEDIA_CAP_BYTES = 32 * 1024 * 1024;
/** PDF work takes longer than a text read: its own deadline. */
const PDF_TIMEOUT_MS = 60_000;

export const readInput = z.strictObject({
  path: z.string().min(1, 'path must not be empty').describe('File path, relative to your sandbox folder.'),
  offset: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('First line (a PDF: first page) to return, 1-based.'),
  limit: z.number().int().positive().optional().describe('Number of lines (a PDF: pages) to return.'),
});

export const readTool = defineTool({
  name: 'read',
  description:
    'Read a file in your sandbox folder. Text: use offset (1-based line) and limit (lines) for large files. ' +
    'Images (PNG, JPEG, GIF, WebP) come back as an image you can see. PDFs come back as text page by page ' +
    '(offset and limit count pages).',
  input: readInput,
  async run(input, ctx): Promise<ToolOutcome> {
    const windowed = input.offset !== undefined || input.limit !== undefined;
    let content: string;
    try {
      const media = await withDeadline(`Reading ${input.path}`, async () => {
        const { handle, info } = await openInSandbox(ctx.sandboxDir, input.path);
        try {
          const head = Buffer.alloc(16);
          const { bytesRead } = await handle.read(head, 0, 16, 0);
          const image = imageTypeOf(head.subarray(0, bytesRead));
          if (image === null && !isPdf(head.subarray(0, bytesRead))) return null;
          if (info.size > READ_MEDIA_CAP_BYTES) {
            throw new Error(
              `${input.path} is ${info.size} bytes, more than the ${READ_MEDIA_CAP_BYTES}-byte limit for images and PDFs.`,
            );
          }
          return { image, bytes: await handle.readFile(), fileSize: info.size };
        } finally {
          await handle.close();
        }
      });
      if (media?.image) return await imageOutcome(input.path, media.bytes, media.image, media.fileSize);
      if (media) {
        return await withDeadline(
          `Reading the PDF ${input.path}`,
          () => pdfOutcome(input.path, media.bytes, media.fileSize, input, ctx.scrub),
          PDF_TIMEOUT_MS,
        );
      }
      content = await withDeadline(`Reading ${input.path}`, async () => {
        const { handle, info } = await openInSandbox(ctx.sandboxDir, input.path);
        try {
          if (!windowed && info.size > READ_CAP_BYTES) {
            throw new Error(
              `${input.path} is ${info.size} bytes, more than the ${READ_CAP_BYTES}-byte read limit. ` +
                'Read it in parts with offset and limit (lines), or search it with shell (grep, head).',
            );
          }
          const text = await readLineWindow(handle, (input.offset ?? 1) - 1, input.limit, READ_CAP_BYTES);
          if (text !== null) return text;
          throw new Error(
            windowed
              ? `That window of ${input.path} is over ${READ_CAP_BYTES} bytes; ask for fewer lines.`
              : `${input.path} grew past the ${READ_CAP_BYTES}-byte read limit while it was read; ` +
                  'read it in parts with offset and limit (lines).',
          );
        } finally {
          await handle.close();
        }
      });
    } catch (error) {
      return errorOutcome(ctx.scrub.text((error as Error).message));
    }
    return { envelope: { success: { content: ctx.scrub.text(content) } }, summary: input.path };
  },
  modelOutput(result) {
    const success = successFields(result);
    if (!success) return undefined;
    if (typeof success.imageData === 'string' && typeof success.mediaType === 'string')
      return imageModelOutput(success);
    if (typeof success.totalPages === 'number' && typeof success.content === 'string')
      return { type: 'text', value: success.content };
    return undefined;
  },
});

/**
 * A read image on disk: its size, the scaled size the model got and that image as base64
 * (`imageData`, as Grok Bot's own image results carry theirs: docs/formats/grok-bot.md).
 */
async function imageOutcome(
  requested: string,
  bytes: Buffer,
  type: ImageMediaType,
  fileSize: number,
): Promise<ToolOutcome> {
  let image;
  try {
    image = await imageForModel(bytes, type);
  } catch (error) {
    return errorOutcome(
      `${requested} looks like ${type} but could not be decoded: ${(error as Error).message}`,
    );
  }
  return {
    envelope: {
      success: {
        path: requested,
        fileSize,
        mediaType: image.mediaType,
        width: image.width,
        height: image.height,
        originalWidth: image.originalWidth,
        originalHeight: image.originalHeight,
        imageData: image.data,
      },
    },
    summary: `${requested} (image ${image.originalWidth}×${image.originalHeight})`,
  };
}

function imageModelOutput(success: { [key: string]: JsonValue }): ToolModelOutput {
  const n = (key: string) => (typeof success[key] === 'number' ? success[key] : 0);
  const scaled = n('width') !== n('originalWidth') ? `, shown scaled to ${n('width')}×${n('height')}` : '';
  const name = typeof success.path === 'string' ? success.path : '';
  return {
    type: 'content',
    value: [
      { type: 'text', text: `Image ${name} (${n('originalWidth')}×${n('originalHeight')} px${scaled}):` },
      { type: 'image-data', data: success.imageData as string, mediaType: success.mediaType as string },
    ],
  };
}

async function pdfOutcome(
  requested: string,
  bytes: Buffer,
  fileSize: number,
  window: { offset?: number | undefined; limit?: number | undefined },
  scrub: Scrubber,
): Promise<ToolOutcome> {
  let pdf;
  try {
    pdf = await pdfText(bytes, window, READ_CAP_BYTES);
  } catch (error) {
    return errorOutcome(`${requested} could not be read as a PDF: ${(error as Error).message}`);
  }
  if (pdf.startPage > pdf.totalPages) {
    return errorOutcome(
      `${requested} has ${pdf.totalPages} page${pdf.totalPages === 1 ? '' : 's'}; offset ${pdf.startPage} is past the end.`,
    );
  }
  const blank = pdf.pages.every((page) => page === '');
  const parts = pdf.pages.map(
    (page, i) =>
      `--- Page ${pdf.startPage + i} of ${pdf.totalPages} ---\n${page || '(no text on this page)'}`,
  );
  let content = parts.join('\n\n');
  if (blank) {
    content =
      `${requested} has no text layer on ${pdf.pages.length === pdf.totalPages ? 'any of its' : 'the requested'} ` +
      `${pdf.pages.length} page${pdf.pages.length === 1 ? '' : 's'} (it is probably scanned images), so its text ` +
      'cannot be read. Tell the user, or ask for a PDF with text.';
  } else if (pdf.cut || pdf.endPage < pdf.totalPages) {
    content +=
      `\n\n[Pages ${pdf.startPage}–${pdf.endPage} of ${pdf.totalPages} shown` +
      `${pdf.cut ? ` (the text of more pages would pass the ${READ_CAP_BYTES}-character limit)` : ''}. ` +
      `Read on with offset ${pdf.endPage + 1}.]`;
  }
  return {
    envelope: {
      success: {
        path: requested,
        fileSize,
        totalPages: pdf.totalPages,
        readRange: { startPage: pdf.startPage, endPage: pdf.endPage },
        content: scrub.text(content),
      },
    },
    summary: `${requested} (PDF, pages ${pdf.startPage}–${pdf.endPage} of ${pdf.totalPages})`,
  };
}
