import pc from 'picocolors';
import { expect, it } from 'vitest';
import { grokBotFromCommon, grokBotToCommon } from '../harness/grok-bot/codec.ts';
import { parseGrokBotJsonl, renderGrokBotJsonl } from '../harness/grok-bot/text.ts';
import { renderView } from './view.ts';

const plain = pc.createColors(false);
const call = (name: string, input: object) =>
  JSON.stringify({ role: 'assistant', message: { content: [{ type: 'tool_use', name, input }] } });
const result = (name: string, value: object) =>
  JSON.stringify({ role: 'tool', message: { content: [{ type: 'tool_result', name, result: value }] } });

/** Records in the shapes the box writes for its work tools (docs/formats/grok-bot.md, "Work tools"). */
const JSONL = [
  JSON.stringify({ role: 'user', message: { content: [{ type: 'text', text: '[t0u]\nwork' }] } }),
  call('edit', { path: 'a.txt', old_string: 'x', new_string: 'y', toolCallId: 'c1' }),
  result('edit', {
    success: {
      path: 'a.txt',
      replacements: 1,
      linesAdded: 1,
      linesRemoved: 1,
      diffString: '@@ -1,1 +1,1 @@\n-x\n+y',
    },
  }),
  call('grep', { pattern: 'alpha', toolCallId: 'c2' }),
  result('grep', {
    success: {
      pattern: 'alpha',
      path: '.',
      outputMode: 'content',
      workspaceResults: {
        '/s': {
          content: {
            matches: [
              {
                file: 'src/a.ts',
                matches: [
                  {
                    lineNumber: 3,
                    content: 'const alpha = 1;',
                    contentTruncated: false,
                    isContextLine: false,
                  },
                ],
              },
            ],
            totalLines: 1,
            totalMatchedLines: 1,
            clientTruncated: false,
            ripgrepTruncated: false,
          },
        },
      },
    },
  }),
  call('glob', { pattern: '**/*.ts', toolCallId: 'c3' }),
  result('glob', {
    success: { pattern: '**/*.ts', path: '/s', files: ['src/a.ts'], totalFiles: 1, clientTruncated: false },
  }),
  call('ls', { toolCallId: 'c4' }),
  result('ls', {
    success: {
      directoryTreeRoot: {
        absPath: '/s',
        childrenDirs: [
          { absPath: '/s/src', childrenDirs: [], childrenFiles: [], childrenWereProcessed: false },
        ],
        childrenFiles: [
          { name: 'a.txt', size: 1 },
          { name: 'out', size: 4, type: 'symbolic link' },
        ],
        childrenWereProcessed: true,
        numFiles: 2,
      },
    },
  }),
  call('delete', { path: 'a.txt', toolCallId: 'c5' }),
  result('delete', { success: { path: 'a.txt', message: 'Deleted the file a.txt.' } }),
  call('read', { path: 'shot.png', toolCallId: 'c6' }),
  result('read', {
    success: {
      path: 'shot.png',
      fileSize: 90,
      mediaType: 'image/png',
      width: 40,
      height: 30,
      originalWidth: 40,
      originalHeight: 30,
      imageData: 'A'.repeat(4096),
    },
  }),
  call('web_search', { searchTerm: 'ferns', toolCallId: 'c7' }),
  result('web_search', {
    success: { references: [{ title: 'Ferns', url: 'https://ex.test/f', chunk: 'Water weekly.' }] },
  }),
  call('web_fetch', { url: 'http://10.0.0.1/', toolCallId: 'c8' }),
  result('web_fetch', { error: { error: '10.0.0.1 is a private address', url: 'http://10.0.0.1/' } }),
].join('\n');

it('reads the work tools back through the grok_bot codec and shows them in view', () => {
  const records = parseGrokBotJsonl(`${JSONL}\n`).records;
  const common = grokBotToCommon(records, { sessionId: 's1' });
  // edit is typed as Common's Edit, the others stay Raw under their names.
  const tools = common.messages.flatMap((m) =>
    m.content.flatMap((b) => (b.type === 'tool_use' ? [b.tool] : [])),
  );
  expect(tools[0]).toEqual({ name: 'Edit', file_path: 'a.txt', old_string: 'x', new_string: 'y' });
  expect(tools.slice(1).map((t) => (t.name === 'Raw' ? t.tool_name : t.name))).toEqual([
    'grep',
    'glob',
    'ls',
    'delete',
    'Read',
    'web_search',
    'web_fetch',
  ]);
  // A round trip through Common gives back the same tool records (Common drops the address tag, as documented).
  const back = renderGrokBotJsonl(grokBotFromCommon(common));
  expect(back.split('\n').slice(1)).toEqual(`${JSONL}\n`.split('\n').slice(1));

  const view = renderView(common, { harness: 'grok_bot', colors: plain, resultLines: 10 });
  for (const shown of [
    '→ Edit: a.txt',
    '← 1 replacement(s), +1 -1',
    '-x',
    '← src/a.ts:3: const alpha = 1;',
    '← src/a.ts',
    '← src/',
    'out (symbolic link)',
    'Deleted the file a.txt.',
    '← [image: image/png, 40×30, 3 KB from shot.png]',
    '← Ferns <https://ex.test/f> — Water weekly.',
    '✗ error: 10.0.0.1 is a private address',
  ])
    expect(view).toContain(shown);
  expect(view).not.toContain('AAAA');
});
