import { describe, expect, it } from 'vitest';
import { previewLine } from './preview-line.ts';

describe('previewLine', () => {
  it('keeps the words of a Markdown message and drops its marks', () => {
    expect(previewLine('Step **done**, see [the log](https://example.com/log) and `make`.')).toBe(
      'Step done, see the log and make.',
    );
    expect(previewLine('# Plan\n\n- first *item*\n- second\n\n> quoted\n\n![A chart](x.png)')).toBe(
      'Plan first item second quoted A chart',
    );
    expect(previewLine('```bash\necho hi\n```\nafter')).toBe('echo hi after');
  });

  it('keeps text that only looks like markup in part, and cuts to the length asked', () => {
    expect(previewLine('2 * 3 = 6 and a_b_c')).toBe('2 * 3 = 6 and a_b_c');
    expect(previewLine('x'.repeat(1_000_000), 240)).toHaveLength(240);
  });
});
