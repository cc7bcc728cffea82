import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { writeText } from './output.ts';

describe('writeText', () => {
  it('writes every piece in order, waiting for a full stream to drain before the next chunk', async () => {
    // A stream that holds one byte before it asks the writer to wait.
    const stream = new PassThrough({ highWaterMark: 1 });
    const piece = 'é'.repeat(400_000); // 800 KB each: a chunk apiece (1 MB chunks)
    let made = 0;
    function* pieces(): Generator<string> {
      for (let i = 0; i < 4; i++) {
        made++;
        yield piece;
      }
    }
    const done = writeText(stream, pieces());
    await new Promise((r) => setImmediate(r));
    // Nobody has read yet: the writer waits after its first chunk instead of queuing them all.
    expect(made).toBeLessThanOrEqual(2);
    expect(stream.writableLength).toBeLessThanOrEqual(Buffer.byteLength(piece));
    const read: Buffer[] = [];
    stream.on('data', (c: Buffer) => read.push(c));
    await done;
    expect(made).toBe(4);
    expect(Buffer.concat(read).toString('utf8')).toBe(piece.repeat(4));
  });

  it('writes to a stream that never asks to wait (a captured one in tests)', async () => {
    let out = '';
    await writeText({ write: (c) => (out += c.toString()) }, ['a', 'é', '😀']);
    expect(out).toBe('aé😀');
  });
});
