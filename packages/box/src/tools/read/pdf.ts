/**
 * The text of a PDF, page by page, through pdf.js (pdfjs-dist's Node build, in this thread;
 * no fonts loaded: only the text layer is read). A PDF whose pages have no text (a scan) says
 * so rather than returning nothing.
 */
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

export function isPdf(bytes: Uint8Array): boolean {
  return (
    Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 5)).toString('latin1') === '%PDF-'
  );
}

export interface PdfText {
  totalPages: number;
  /** 1-based, inclusive. */
  startPage: number;
  endPage: number;
  /** One string per page read, in order. */
  pages: string[];
}

/** Pages `offset` (1-based) to `offset + limit - 1`, stopping early once `capChars` of text are read. */
export async function pdfText(
  bytes: Uint8Array,
  window: { offset?: number | undefined; limit?: number | undefined },
  capChars: number,
): Promise<PdfText & { cut: boolean }> {
  // pdf.js takes ownership of the buffer it is given: hand it a copy.
  const task = getDocument({
    data: new Uint8Array(bytes),
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  try {
    const doc = await task.promise;
    const totalPages = doc.numPages;
    const startPage = window.offset ?? 1;
    const endPage = Math.min(
      totalPages,
      window.limit === undefined ? totalPages : startPage + window.limit - 1,
    );
    const pages: string[] = [];
    let chars = 0;
    let cut = false;
    for (let n = startPage; n <= endPage; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        text += item.str + (item.hasEOL ? '\n' : '');
      }
      page.cleanup();
      text = text.replace(/[ \t]+\n/g, '\n').trim();
      if (pages.length > 0 && chars + text.length > capChars) {
        cut = true;
        break;
      }
      pages.push(text);
      chars += text.length;
    }
    return { totalPages, startPage, endPage: startPage + pages.length - 1, pages, cut };
  } finally {
    await task.destroy();
  }
}
