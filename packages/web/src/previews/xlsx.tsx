/** Excel preview: the first worksheet as a table, capped in rows and columns. */
import ExcelJS from 'exceljs';
import { useEffect, useState } from 'react';
import { cellText } from './cell-text.ts';

const MAX_ROWS = 100;
const MAX_COLUMNS = 26;

interface SheetPreview {
  name: string;
  rows: string[][];
  totalRows: number;
  totalColumns: number;
}

export default function XlsxPreview({ blob }: { blob: Blob; fileName: string }) {
  const [sheet, setSheet] = useState<SheetPreview | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    void (async () => {
      try {
        const workbook = new ExcelJS.Workbook();
        await workbook.xlsx.load(await blob.arrayBuffer());
        const first = workbook.worksheets[0];
        if (!first) throw new Error('the workbook has no worksheet');
        const columns = Math.min(first.columnCount, MAX_COLUMNS);
        const rows: string[][] = [];
        for (let r = 1; r <= Math.min(first.rowCount, MAX_ROWS); r++) {
          const row = first.getRow(r);
          const cells: string[] = [];
          for (let c = 1; c <= columns; c++) {
            const cell = row.getCell(c);
            cells.push(cellText(cell.value, cell.numFmt, cell.text));
          }
          rows.push(cells);
        }
        if (!cancelled) {
          setSheet({ name: first.name, rows, totalRows: first.rowCount, totalColumns: first.columnCount });
        }
      } catch (error) {
        if (!cancelled)
          setProblem(`This workbook could not be previewed (${String(error)}). Download it instead.`);
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [blob]);

  if (problem) return <p className="preview-note">{problem}</p>;
  if (!sheet) return <p className="preview-note">Reading…</p>;
  const clipped = sheet.totalRows > sheet.rows.length || sheet.totalColumns > MAX_COLUMNS;
  return (
    <div className="preview preview-xlsx" data-testid="preview-xlsx">
      <div className="table-scroll">
        <table>
          <caption>{sheet.name}</caption>
          <tbody>
            {sheet.rows.map((cells, r) => (
              <tr key={r}>
                {cells.map((text, c) => (r === 0 ? <th key={c}>{text}</th> : <td key={c}>{text}</td>))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {clipped && (
        <p className="preview-note">
          First {sheet.rows.length} of {sheet.totalRows} rows and {Math.min(sheet.totalColumns, MAX_COLUMNS)}{' '}
          of {sheet.totalColumns} columns of the first sheet — download for the rest.
        </p>
      )}
    </div>
  );
}
