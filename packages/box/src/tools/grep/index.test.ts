import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { scrubberFor } from '../../secrets/scrub.ts';
import { errorText, successOf, useToolSandbox } from '../test-context.ts';
import { grepTool } from './index.ts';

const box = useToolSandbox();

const grep = () => grepTool({ confinement: box.confinement });
const write = async (rel: string, text: string | Buffer) => {
  await mkdir(path.dirname(path.join(box.sandbox, rel)), { recursive: true });
  await writeFile(path.join(box.sandbox, rel), text);
};
const modelText = (envelope: unknown) => {
  const out = grep().modelOutput!(envelope as never);
  return out && out.type === 'text' ? out.value : '';
};

it('finds path:line: text below the sandbox, skipping binary files', async () => {
  await write('src/a.ts', 'const alpha = 1;\nconst beta = 2;\n');
  await write('notes.md', 'Alpha and omega\n');
  await write(
    'blob.bin',
    Buffer.concat([Buffer.from('alpha'), Buffer.from([0, 1, 2, 0]), Buffer.from('alpha\n')]),
  );
  const out = await grep().run({ pattern: 'alpha', ignore_case: true }, box.ctx);
  const success = successOf(out.envelope);
  expect(success).toMatchObject({ pattern: 'alpha', path: '.', outputMode: 'content' });
  expect(modelText(out.envelope).split('\n').sort()).toEqual([
    'notes.md:1: Alpha and omega',
    'src/a.ts:1: const alpha = 1;',
  ]);
  // Case matters without ignore_case; glob narrows.
  const exact = await grep().run({ pattern: 'alpha', glob: '*.ts' }, box.ctx);
  expect(modelText(exact.envelope)).toBe('src/a.ts:1: const alpha = 1;');
});

it('keeps max_results and counts the rest', async () => {
  await write('many.txt', Array.from({ length: 30 }, (_, i) => `hit ${i}`).join('\n'));
  const out = await grep().run({ pattern: '^hit', max_results: 5 }, box.ctx);
  const text = modelText(out.envelope);
  expect(text.split('\n').slice(0, 5)).toEqual([
    'many.txt:1: hit 0',
    'many.txt:2: hit 1',
    'many.txt:3: hit 2',
    'many.txt:4: hit 3',
    'many.txt:5: hit 4',
  ]);
  expect(text).toContain('… 25 more matching lines left out');
  expect(successOf(out.envelope)).toMatchObject({
    workspaceResults: {
      [box.sandbox]: { content: { totalLines: 5, totalMatchedLines: 30, clientTruncated: true } },
    },
  });
});

it('never follows a planted link, and runs confined (nothing outside the sandbox is visible)', async () => {
  await mkdir(path.join(box.root, 'outside'));
  await writeFile(path.join(box.root, 'outside', 'secret.txt'), 'needle outside\n');
  await symlink(path.join(box.root, 'outside'), path.join(box.sandbox, 'out'));
  await write('in.txt', 'needle inside\n');
  const out = await grep().run({ pattern: 'needle' }, box.ctx);
  expect(modelText(out.envelope)).toBe('in.txt:1: needle inside');
  expect(errorText((await grep().run({ pattern: 'needle', path: 'out' }, box.ctx)).envelope)).toContain(
    'symbolic link',
  );
  expect(errorText((await grep().run({ pattern: 'needle', path: '..' }, box.ctx)).envelope)).toContain(
    'outside',
  );
  if (box.confinement.status.confined) {
    // A glob cannot reach out either: the search process sees only the sandbox.
    const escaped = await grep().run({ pattern: 'root', path: '.', glob: '/etc/*' }, box.ctx);
    expect(JSON.stringify(escaped.envelope)).not.toContain('secret.txt');
  }
});

it("answers a bad regex with ripgrep's reason, and scrubs secrets from matches", async () => {
  expect(errorText((await grep().run({ pattern: '(unclosed' }, box.ctx)).envelope)).toMatch(
    /grep failed: .*regex/is,
  );
  await write('env.txt', 'TOKEN=tok-0123456789\n');
  const ctx = { ...box.ctx, scrub: scrubberFor(new Map([['API_TOKEN', 'tok-0123456789']])) };
  const out = await grep().run({ pattern: 'TOKEN' }, ctx);
  expect(JSON.stringify(out)).not.toContain('tok-0123456789');
  expect(modelText(out.envelope)).toContain('[secret API_TOKEN redacted]');
});

it('gives up at its timeout, killing the search, and says how to narrow it', async () => {
  // A stand-in for ripgrep that never finishes (inside the sandbox, so the confined run sees it).
  await write('slow-rg', '#!/bin/sh\nexec sleep 60\n');
  await chmod(path.join(box.sandbox, 'slow-rg'), 0o755);
  const started = Date.now();
  const out = await grepTool({
    confinement: box.confinement,
    rg: path.join(box.sandbox, 'slow-rg'),
    timeoutMs: 500,
  }).run({ pattern: 'x' }, box.ctx);
  expect(errorText(out.envelope)).toBe(
    'grep did not finish within 0.5 s; search a smaller folder with path or glob.',
  );
  expect(Date.now() - started).toBeLessThan(20_000);
});

it('reads matches whole when a multi-byte character straddles two chunks of output', async () => {
  // Enough matching lines of non-ASCII text that ripgrep's output arrives in several chunks.
  const line = 'ünïcödé — 日本語のテキスト ✓ needle\n';
  await write('wide.txt', line.repeat(3000));
  const out = await grep().run({ pattern: 'needle', max_results: 1000 }, box.ctx);
  const lines = modelText(out.envelope).split('\n').slice(0, 1000);
  expect(lines).toHaveLength(1000);
  for (const text of lines) expect(text).toMatch(/^wide\.txt:\d+: ünïcödé — 日本語のテキスト ✓ needle$/);
});
