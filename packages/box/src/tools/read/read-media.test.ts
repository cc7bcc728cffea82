import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { textPdfPages } from '../../cli/demo-pdf.ts';
import { errorText, successOf, useToolSandbox } from '../test-context.ts';
import { readTool } from './index.ts';

const box = useToolSandbox();

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .png()
    .toBuffer();

describe('read: images', () => {
  it('returns a PNG as an image the model sees, with its size', async () => {
    await writeFile(path.join(box.sandbox, 'shot.png'), await png(40, 30));
    const out = await readTool.run({ path: 'shot.png' }, box.ctx);
    const success = successOf(out.envelope);
    expect(success).toMatchObject({
      path: 'shot.png',
      mediaType: 'image/png',
      width: 40,
      height: 30,
      originalWidth: 40,
    });
    const model = readTool.modelOutput!(out.envelope);
    expect(model?.type).toBe('content');
    const parts = model?.type === 'content' ? model.value : [];
    expect(parts[0]).toEqual({ type: 'text', text: 'Image shot.png (40×30 px):' });
    expect(parts[1]).toMatchObject({ type: 'image-data', mediaType: 'image/png' });
    const decoded = await sharp(Buffer.from((parts[1] as { data: string }).data, 'base64')).metadata();
    expect([decoded.format, decoded.width, decoded.height]).toEqual(['png', 40, 30]);
  });

  it('scales a large image down to 1568 px on its long side, by content not name', async () => {
    const big = await sharp({ create: { width: 4000, height: 1000, channels: 3, background: '#123456' } })
      .jpeg()
      .toBuffer();
    await writeFile(path.join(box.sandbox, 'photo.dat'), big);
    const success = successOf((await readTool.run({ path: 'photo.dat' }, box.ctx)).envelope);
    expect(success).toMatchObject({
      mediaType: 'image/jpeg',
      width: 1568,
      height: 392,
      originalWidth: 4000,
      originalHeight: 1000,
    });
    const meta = await sharp(Buffer.from(success.imageData as string, 'base64')).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 1568, 392]);
  });

  it('turns a GIF into a PNG and says when an image cannot be decoded', async () => {
    const gif = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#00ff00' } })
      .gif()
      .toBuffer();
    await writeFile(path.join(box.sandbox, 'a.gif'), gif);
    expect(successOf((await readTool.run({ path: 'a.gif' }, box.ctx)).envelope).mediaType).toBe('image/png');
    await writeFile(
      path.join(box.sandbox, 'broken.png'),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]),
    );
    expect(errorText((await readTool.run({ path: 'broken.png' }, box.ctx)).envelope)).toContain(
      'could not be decoded',
    );
  });

  it('never reads an image through a planted link', async () => {
    await writeFile(path.join(box.root, 'outside.png'), await png(4, 4));
    await symlink(path.join(box.root, 'outside.png'), path.join(box.sandbox, 'in.png'));
    expect(errorText((await readTool.run({ path: 'in.png' }, box.ctx)).envelope)).toContain('symbolic link');
  });
});

describe('read: PDFs', () => {
  const threePages = textPdfPages([
    { title: 'First page', lines: ['alpha line'] },
    { title: 'Second page', lines: ['beta line'] },
    { title: 'Third page', lines: ['gamma line'] },
  ]);

  it('reads a 3-page PDF in full, page by page', async () => {
    await writeFile(path.join(box.sandbox, 'doc.pdf'), threePages);
    const out = await readTool.run({ path: 'doc.pdf' }, box.ctx);
    const success = successOf(out.envelope);
    expect(success).toMatchObject({
      path: 'doc.pdf',
      totalPages: 3,
      readRange: { startPage: 1, endPage: 3 },
    });
    expect(success.content).toBe(
      [
        '--- Page 1 of 3 ---\nFirst page\nalpha line',
        '--- Page 2 of 3 ---\nSecond page\nbeta line',
        '--- Page 3 of 3 ---\nThird page\ngamma line',
      ].join('\n\n'),
    );
    expect(readTool.modelOutput!(out.envelope)).toEqual({ type: 'text', value: success.content });
  });

  it('counts offset and limit in pages, and says where to read on', async () => {
    await writeFile(path.join(box.sandbox, 'doc.pdf'), threePages);
    const success = successOf(
      (await readTool.run({ path: 'doc.pdf', offset: 2, limit: 1 }, box.ctx)).envelope,
    );
    expect(success.readRange).toEqual({ startPage: 2, endPage: 2 });
    expect(success.content).toBe(
      '--- Page 2 of 3 ---\nSecond page\nbeta line\n\n[Pages 2–2 of 3 shown. Read on with offset 3.]',
    );
    expect(errorText((await readTool.run({ path: 'doc.pdf', offset: 4 }, box.ctx)).envelope)).toContain(
      'has 3 pages; offset 4 is past the end',
    );
  });

  it('says so when a PDF has no text layer', async () => {
    await writeFile(
      path.join(box.sandbox, 'scan.pdf'),
      textPdfPages([
        { title: '', lines: [] },
        { title: '', lines: [] },
      ]),
    );
    const success = successOf((await readTool.run({ path: 'scan.pdf' }, box.ctx)).envelope);
    expect(success.content).toContain('has no text layer on any of its 2 pages');
  });
});
