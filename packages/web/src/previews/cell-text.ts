/**
 * A workbook cell as a spreadsheet shows it: a formula by its cached result, a number through
 * its number format (decimals, thousands, percent, a currency or unit in quotes, dates), and a
 * number without one as Excel's "General" does (at most 15 significant digits, so a binary
 * double's noise like 0.30000000000000004 reads 0.3). ExcelJS's own `cell.text` gives the raw
 * double of a formula's result.
 */
import type { CellValue } from 'exceljs';

export function cellText(value: CellValue, numFmt: string | undefined, fallback: string): string {
  const shown = resultOf(value);
  if (typeof shown === 'number') return formatNumber(shown, numFmt);
  if (shown instanceof Date) return formatDate(shown, numFmt);
  if (typeof shown === 'boolean') return shown ? 'TRUE' : 'FALSE';
  if (shown !== null && typeof shown === 'object' && 'error' in shown) return String(shown.error);
  return fallback;
}

/** A formula's cached result (what the file says it showed), else the value itself. */
function resultOf(value: CellValue): unknown {
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && 'result' in value)
    return value.result ?? null;
  return value;
}

/** Excel's "General": the shortest text for the number at 15 significant digits. */
export function general(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const rounded = Number(value.toPrecision(15));
  const abs = Math.abs(rounded);
  if (abs !== 0 && (abs >= 1e15 || abs < 1e-9))
    return rounded.toExponential().replace('e+', 'E+').toUpperCase();
  return String(rounded);
}

export function formatNumber(value: number, numFmt: string | undefined): string {
  // The positive section; a negative number gets its minus sign from Intl.
  const format = (numFmt ?? '').split(';')[0] ?? '';
  if (format === '' || /^general$/i.test(format)) return general(value);
  if (isDateFormat(format)) return formatDate(fromSerial(value), format);
  const bare = format.replace(/"[^"]*"|\\.|\[[^\]]*\]/g, '');
  const digits = /[0#?]/.test(bare);
  if (!digits) return general(value);
  const percent = bare.includes('%');
  const decimals = /\.([0#?]+)/.exec(bare)?.[1]?.length ?? 0;
  const grouping = /[0#?],[0#?]/.test(bare);
  const text = new Intl.NumberFormat(undefined, {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
    useGrouping: grouping,
  }).format(percent ? value * 100 : value);
  return `${literal(format, 'before')}${text}${percent ? '%' : ''}${literal(format, 'after')}`;
}

/** The literal text (`"$"`, `\€`, `[$€-407]`, a bare `$`) before or after the digits. */
function literal(format: string, side: 'before' | 'after'): string {
  const first = format.search(/[0#?]/);
  const last = Math.max(format.lastIndexOf('0'), format.lastIndexOf('#'), format.lastIndexOf('?'));
  const part = side === 'before' ? format.slice(0, first) : format.slice(last + 1);
  return part
    .replace(/\[\$([^\]-]*)(-[^\]]*)?\]/g, '$1')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/"([^"]*)"/g, '$1')
    .replace(/\\(.)/g, '$1')
    .replace(/[_*]./g, '')
    .replace(/[%,.0#?]/g, '');
}

function isDateFormat(format: string): boolean {
  const bare = format.replace(/"[^"]*"|\\.|\[[^\]]*\]/g, '');
  return /[dmyhs]/i.test(bare) && !/[0#?]/.test(bare.replace(/s+\.0+/g, ''));
}

/** An Excel date serial (days since 1899-12-30, the 1900 system) as a UTC date. */
function fromSerial(serial: number): Date {
  return new Date(Math.round((serial - 25_569) * 86_400_000));
}

function formatDate(date: Date, format: string | undefined): string {
  const bare = (format ?? '').replace(/"[^"]*"|\\.|\[[^\]]*\]/g, '');
  const hasDate = /[dy]/i.test(bare) || /m{3,}/i.test(bare) || bare === '';
  const hasTime = /[hs]/i.test(bare);
  return new Intl.DateTimeFormat(undefined, {
    timeZone: 'UTC',
    ...(hasDate || !hasTime ? { dateStyle: 'medium' as const } : {}),
    ...(hasTime ? { timeStyle: 'short' as const } : {}),
  }).format(date);
}
