/**
 * Small real files generated in code, for the browser tests (which put them in an agent's
 * sandbox and have the scripted model attach them) and the preview fixture. Each generator's
 * known content is exported beside it, so a test can assert what the preview must show.
 */
import { crc32, deflateSync } from 'node:zlib';
import ExcelJS from 'exceljs';

/** Text drawn on the PDF's two pages. */
export const SAMPLE_PDF_LINES = ['Quarterly report', 'Rendered by pdf.js in the page.', 'Page two'] as const;

/** A two-page PDF 1.4 with Helvetica text (a hand-built xref, no library). */
export function samplePdf(): Buffer {
  const stream = (text: string) => `<< /Length ${text.length} >>\nstream\n${text}\nendstream`;
  const [title, subtitle, pageTwo] = SAMPLE_PDF_LINES;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 2 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 420 300] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    stream(`BT /F1 24 Tf 40 220 Td (${title}) Tj /F1 14 Tf 0 -40 Td (${subtitle}) Tj ET`),
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 420 300] /Contents 7 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    stream(`BT /F1 18 Tf 40 220 Td (${pageTwo}) Tj ET`),
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body));
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body);
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** A STORE-only (uncompressed) zip: enough for a .docx mammoth can read. */
export function zip(files: Record<string, string>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of Object.entries(files)) {
    const data = Buffer.from(text, 'utf8');
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const centralSize = centrals.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

/** Paragraph texts of the .docx, as the preview shows them. */
export const SAMPLE_DOCX_TEXT = {
  heading: 'Meeting notes',
  body: 'The Word preview runs mammoth in the page and keeps only allow-listed HTML.',
  /** Escaped markup in the document: it must show as text, never run. */
  inertMarkup: '<script>alert(1)</script> stays text.',
  bold: 'Bold decisions',
} as const;

/** A minimal .docx: a heading, two paragraphs (one holding escaped markup) and a bold run. */
export function sampleDocx(): Buffer {
  const w = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const para = (text: string, style?: string) =>
    `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${escape(text)}</w:t></w:r></w:p>`;
  const t = SAMPLE_DOCX_TEXT;
  return zip({
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    '_rels/.rels':
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    'word/document.xml': `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${w}"><w:body>${para(t.heading, 'Heading1')}${para(t.body)}${para(t.inertMarkup)}<w:p><w:r><w:rPr><w:b/></w:rPr><w:t>${t.bold}</w:t></w:r><w:r><w:t xml:space="preserve"> and plain follow-ups.</w:t></w:r></w:p></w:body></w:document>`,
  });
}

export const SAMPLE_XLSX = {
  sheet: 'Budget',
  header: ['Item', 'Q1', 'Q2', 'Total', 'Q1 share', 'Growth'],
  /**
   * Data rows: `Line i`, 10·i, 12·i, then formulas with their cached results as Excel saves
   * them: Total = Q1+Q2 (22·i), Q1 share = Q1/Total in a `0.0%` format (45.5%), and Growth =
   * Q2/Q1-1 with no format, whose double is 0.19999999999999996 (shown 0.2). More rows than the
   * preview's 100-row cap.
   */
  rows: 150,
} as const;

/** A one-sheet workbook: a header row and `SAMPLE_XLSX.rows` data rows. */
export async function sampleXlsx(): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet(SAMPLE_XLSX.sheet);
  sheet.addRow([...SAMPLE_XLSX.header]);
  for (let i = 1; i <= SAMPLE_XLSX.rows; i++) {
    const r = i + 1;
    const row = sheet.addRow([
      `Line ${i}`,
      i * 10,
      i * 12,
      { formula: `B${r}+C${r}`, result: i * 22 },
      { formula: `B${r}/D${r}`, result: (i * 10) / (i * 22) },
      { formula: `C${r}/B${r}-1`, result: (i * 12) / (i * 10) - 1 },
    ]);
    row.getCell(5).numFmt = '0.0%';
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

/** An RGB gradient PNG (red across, green down, a fixed blue `hue`). */
export function samplePng(width: number, height: number, hue: number): Buffer {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 3 + 1)] = 0;
    for (let x = 0; x < width; x++) {
      const o = y * (width * 3 + 1) + 1 + x * 3;
      raw[o] = (x * 255) / width;
      raw[o + 1] = (y * 255) / height;
      raw[o + 2] = hue;
    }
  }
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed));
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
