/**
 * A small, valid PDF built from text lines, for the demo agent's attachment
 * (and the read tool's tests). Plain ASCII (the write tool takes text),
 * Helvetica, with a correct cross-reference table so every viewer (pdf.js
 * included) opens it. A page with no title and no lines has no text layer.
 */
function escapePdfText(line: string): string {
  return line.replace(/[\\()]/g, (char) => `\\${char}`).replace(/[^\x20-\x7e]/g, '?');
}

export function textPdf(title: string, lines: readonly string[]): string {
  return textPdfPages([{ title, lines }]);
}

function pageContent(title: string, lines: readonly string[]): string {
  if (title === '' && lines.length === 0) return '';
  return [
    'BT',
    '/F1 20 Tf',
    '72 720 Td',
    `(${escapePdfText(title)}) Tj`,
    '/F1 12 Tf',
    '0 -32 Td',
    ...lines.flatMap((line) => [`(${escapePdfText(line)}) Tj`, '0 -18 Td']),
    'ET',
  ].join('\n');
}

/** One page per entry: objects 1 catalog, 2 pages, 3 font, then a page and its content per page. */
export function textPdfPages(pages: ReadonlyArray<{ title: string; lines: readonly string[] }>): string {
  const kids = pages.map((_, i) => `${4 + 2 * i} 0 R`).join(' ');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  pages.forEach((page, i) => {
    const content = pageContent(page.title, page.lines);
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${5 + 2 * i} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`,
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    );
  });
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(pdf.length);
    pdf += `${index + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) pdf += `${String(offset).padStart(10, '0')} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return pdf;
}
