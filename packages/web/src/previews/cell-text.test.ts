import { describe, expect, it } from 'vitest';
import { cellText, formatNumber, general } from './cell-text.ts';

describe('cellText', () => {
  it('shows a formula by its result through the number format, never the raw double', () => {
    expect(cellText({ formula: 'A1+A2', result: 0.1 + 0.2 }, undefined, '0.30000000000000004')).toBe('0.3');
    expect(cellText({ formula: 'B2/D2', result: 10 / 22 }, '0.0%', '')).toBe('45.5%');
    expect(cellText({ formula: 'SUM(B:B)', result: 1234567.891 }, '#,##0.00', '')).toBe('1,234,567.89');
    expect(cellText({ formula: 'C2*1.1', result: 13.200000000000001 }, '"$"#,##0.00', '')).toBe('$13.20');
    expect(cellText({ formula: 'A1', result: 3.5 }, '0.0 "kg"', '')).toBe('3.5 kg');
    expect(cellText({ formula: '1/0', result: { error: '#DIV/0!' } }, undefined, '')).toBe('#DIV/0!');
    expect(cellText({ formula: 'TODAY()', result: 45_658 }, 'yyyy-mm-dd', '')).toBe('Jan 1, 2025');
    expect(cellText('plain', undefined, 'plain')).toBe('plain');
    expect(cellText(true, undefined, 'true')).toBe('TRUE');
  });

  it("reads numbers as Excel's General does", () => {
    expect(general(2 / 3)).toBe('0.666666666666667');
    expect(general(1e20)).toBe('1E+20');
    expect(general(-0.1 * 3)).toBe('-0.3');
    expect(formatNumber(42, '0')).toBe('42');
    expect(formatNumber(0.25, '0%')).toBe('25%');
    expect(formatNumber(-1234.5, '#,##0.00;(#,##0.00)')).toBe('-1,234.50');
  });
});
