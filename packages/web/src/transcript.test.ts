import { ledgerEntrySchema, SEND_MESSAGE_TYPES, type StoredMessage } from '@sendbox/protocol';
import { describe, expect, it } from 'vitest';
import { parseEntry, type TranscriptEntry } from './api/types.ts';
import {
  approvalOf,
  bubbleKindFor,
  deriveAnswers,
  deriveApprovals,
  hasOpenApproval,
  deriveQuestions,
  answerLabels,
  isShown,
  lastSeq,
  mergeEntries,
} from './transcript.ts';

function entry(raw: Record<string, unknown>): TranscriptEntry {
  const parsed = parseEntry({ timestampMs: 1, ...raw });
  if (!parsed) throw new Error('fixture entry lacks id or seq');
  return parsed;
}

const notice = (seq: number, id = `n${seq}`) => entry({ id, seq, kind: 'notice', text: `notice ${seq}` });

const SAMPLE_MESSAGES: Record<StoredMessage['type'], StoredMessage> = {
  text: { type: 'text', content: 'hi' },
  attachment: { type: 'attachment', url: 'https://example.com/a.pdf' },
  widget: { type: 'widget', widget: { prompt: 'q', options: [{ label: 'a' }] } },
  'cursor-agent': { type: 'cursor-agent', bcId: 'bc-1' },
  'secret-request': {
    type: 'secret-request',
    secretRequest: { label: 'k', target: { kind: 'env', name: 'K' } },
  },
};

describe('bubbleKindFor', () => {
  it('has a bubble for every ledger kind the protocol defines (turn-ended and hidden excepted)', () => {
    const kinds = ledgerEntrySchema.options.map((option) => option.shape.kind.value);
    const samples: Record<string, Record<string, unknown>> = {
      message: { role: 'user', content: 'x' },
      'send-message': { message: SAMPLE_MESSAGES.text },
      'user-attachment': { file_name: 'f', file_path: 'p' },
      'tool-call': { name: 't', status: 'success' },
      notice: { text: 'n' },
      thinking: { text: 't' },
      'turn-ended': {},
      event: { event: { type: 'name-changed', from: 'A', to: 'B' } },
    };
    expect(Object.keys(samples).sort()).toEqual([...kinds].sort());
    for (const kind of kinds) {
      const bubble = bubbleKindFor(entry({ id: kind, seq: 1, kind, ...samples[kind] }));
      if (kind === 'turn-ended') expect(bubble).toBeNull();
      else expect(bubble, kind).not.toBeNull();
    }
  });

  it('has a distinct bubble for every send-message type', () => {
    const bubbles = SEND_MESSAGE_TYPES.map((type) =>
      bubbleKindFor(entry({ id: type, seq: 1, kind: 'send-message', message: SAMPLE_MESSAGES[type] })),
    );
    expect(bubbles).toEqual(['text', 'attachment', 'widget', 'cursor-agent', 'secret-request']);
  });

  it('never shows a hidden user message; shows thinking only with the toggle on', () => {
    const hidden = entry({
      id: 'h',
      seq: 1,
      kind: 'message',
      role: 'user',
      content: 'guidance',
      hidden: true,
    });
    const thinking = entry({ id: 't', seq: 2, kind: 'thinking', text: 'hmm' });
    expect(isShown(hidden, true)).toBe(false);
    expect(isShown(thinking, false)).toBe(false);
    expect(isShown(thinking, true)).toBe(true);
  });

  it('turns entries it cannot read into an unrecognized bubble instead of dropping them', () => {
    const future = entry({ id: 'v', seq: 3, kind: 'voice-call', call: {} });
    const newType = entry({ id: 'c', seq: 4, kind: 'send-message', message: { type: 'connector' } });
    expect(future).toMatchObject({ kind: '$unrecognized', rawKind: 'voice-call' });
    expect(newType).toMatchObject({ kind: '$unrecognized', rawKind: 'send-message connector' });
    expect(bubbleKindFor(future)).toBe('unrecognized');
    expect(parseEntry({ kind: 'notice', text: 'no id or seq' })).toBeNull();
  });
});

describe('deriveAnswers', () => {
  it('maps a send id to the content of the message that answers it, first answer wins', () => {
    const entries = [
      entry({ id: 's1', seq: 1, kind: 'send-message', message: SAMPLE_MESSAGES.widget }),
      entry({ id: 'u1', seq: 2, kind: 'message', role: 'user', content: 'a', respondedValue: 's1' }),
      entry({ id: 'u2', seq: 3, kind: 'message', role: 'user', content: 'late', respondedValue: 's1' }),
      entry({ id: 'u3', seq: 4, kind: 'message', role: 'user', content: 'plain' }),
    ];
    const answers = deriveAnswers(entries);
    expect(answers.get('s1')).toBe('a');
    expect(answers.size).toBe(1);
  });
});

describe('deriveQuestions', () => {
  const widget = (id: string, seq: number, dismissOnMoveOn?: boolean) =>
    entry({
      id,
      seq,
      kind: 'send-message',
      message: { type: 'widget', widget: { prompt: 'q', options: [{ label: 'a' }], dismissOnMoveOn } },
    });
  const user = (id: string, seq: number, extra: Record<string, unknown> = {}) =>
    entry({ id, seq, kind: 'message', role: 'user', content: 'next', ...extra });
  const skipped = (entries: TranscriptEntry[]) => [...deriveQuestions(entries).skipped];

  it('skips an unanswered widget once a new prompt follows it, with or without dismissOnMoveOn', () => {
    expect(skipped([widget('w', 1, true), user('u', 2)])).toEqual(['w']);
    expect(skipped([widget('w', 1), user('u', 2)])).toEqual(['w']);
    expect(skipped([widget('w', 1), user('u', 2, { respondedValue: 'x', widgetSkipped: true })])).toEqual([
      'w',
    ]);
  });

  it('keeps it open without a later prompt, or when it was answered', () => {
    expect(skipped([user('u', 1), widget('w', 2, true)])).toEqual([]);
    expect(skipped([widget('w', 1), user('a', 2, { respondedValue: 'w' }), user('u', 3)])).toEqual([]);
  });

  it('does not count hidden messages or answers to other widgets as moving on', () => {
    const entries = [
      widget('o', 1),
      widget('w', 2),
      user('h', 3, { hidden: true }),
      user('a', 4, { respondedValue: 'o' }),
    ];
    expect(skipped(entries)).toEqual([]);
  });

  it("reads Grok Bot's answer shape: the label in content, the value in respondedValue", () => {
    const entries = [widget('w', 1), user('a', 2, { content: 'Markdown summary', respondedValue: 'md' })];
    expect(deriveQuestions(entries).answers.get('w')).toBe('Markdown summary');
    expect(skipped(entries)).toEqual([]);
  });
});

describe('answerLabels', () => {
  it('maps stored values back to labels and keeps custom answers', () => {
    const options = [{ label: 'Markdown summary', value: 'md' }, { label: 'PDF' }];
    expect(answerLabels('md\nPDF\nmy own', options)).toEqual(['Markdown summary', 'PDF', 'my own']);
  });
});

describe('mergeEntries', () => {
  it('appends in seq order and returns the same array when nothing changed', () => {
    const one = mergeEntries([], [notice(1), notice(2)]);
    expect(one.map((e) => e.seq)).toEqual([1, 2]);
    expect(mergeEntries(one, [one[1]!])).toBe(one);
    expect(mergeEntries(one, [])).toBe(one);
  });

  it('drops a repeat of the same id or seq (stream and upload response racing)', () => {
    const list = mergeEntries([], [notice(1), notice(2)]);
    const again = mergeEntries(list, [notice(2)]);
    expect(again.map((e) => e.id)).toEqual(['n1', 'n2']);
    const sameSeq = mergeEntries(list, [notice(1, 'other-id')]);
    expect(sameSeq.map((e) => e.id)).toEqual(['n1', 'n2']);
  });

  it('replaces an entry with the same id in place', () => {
    const running = entry({ id: 'tc', seq: 2, kind: 'tool-call', name: 'shell', status: 'running' });
    const done = entry({ id: 'tc', seq: 2, kind: 'tool-call', name: 'shell', status: 'success' });
    const merged = mergeEntries(mergeEntries([], [notice(1), running, notice(3)]), [done]);
    expect(merged.map((e) => e.id)).toEqual(['n1', 'tc', 'n3']);
    expect(merged[1]).toBe(done);
  });

  it('inserts an out-of-order entry at its seq', () => {
    const merged = mergeEntries(mergeEntries([], [notice(1), notice(5)]), [notice(3), notice(6), notice(4)]);
    expect(merged.map((e) => e.seq)).toEqual([1, 3, 4, 5, 6]);
    expect(lastSeq(merged)).toBe(6);
    expect(lastSeq([])).toBe(0);
  });
});

describe('approval cards', () => {
  // As approvals/gate.ts writes them: the card, then `<card>-answer`.
  const card = (seq: number, id: string) =>
    entry({
      id,
      seq,
      kind: 'tool-call',
      name: 'mcp',
      status: 'awaiting-approval',
      toolCallId: id.slice('approval-'.length),
      approval: {
        subject: 'mcp:github/create_issue',
        server: 'github',
        toolName: 'create_issue',
        args: { title: 'x' },
        choices: ['allow', 'allow-always', 'deny'],
      },
    });
  const answer = (seq: number, of: string, decision: string) =>
    entry({
      id: `${of}-answer`,
      seq,
      kind: 'tool-call',
      name: 'mcp',
      status: decision === 'deny' ? 'denied' : decision === 'stopped' ? 'stopped' : 'approved',
      approval: { answers: of, decision },
    });

  it('draws a card as an approval, with its server, tool and arguments, and hides its answer', () => {
    expect(bubbleKindFor(card(1, 'approval-a'))).toBe('approval');
    expect(approvalOf(card(1, 'approval-a'))).toEqual({
      subject: 'mcp:github/create_issue',
      server: 'github',
      toolName: 'create_issue',
      args: { title: 'x' },
    });
    expect(bubbleKindFor(answer(2, 'approval-a', 'allow'))).toBeNull();
    // A plain tool call stays a tool row.
    expect(
      bubbleKindFor(entry({ id: 't', seq: 3, kind: 'tool-call', name: 'write', status: 'success' })),
    ).toBe('tool-call');
    // A non-MCP card has no server.
    expect(
      approvalOf(
        entry({
          id: 'approval-w',
          seq: 4,
          kind: 'tool-call',
          name: 'write',
          status: 'awaiting-approval',
          approval: { subject: 'write', toolName: 'write', args: { path: 'a' } },
        }),
      ),
    ).toEqual({ subject: 'write', toolName: 'write', args: { path: 'a' } });
  });

  it('knows how each card was answered and whether one still waits', () => {
    const entries = [
      card(1, 'approval-a'),
      answer(2, 'approval-a', 'allow-always'),
      card(3, 'approval-b'),
      answer(4, 'approval-b', 'stopped'),
      card(5, 'approval-c'),
    ];
    const outcomes = deriveApprovals(entries);
    expect([...outcomes]).toEqual([
      ['approval-a', 'allow-always'],
      ['approval-b', 'stopped'],
    ]);
    expect(hasOpenApproval(entries, outcomes)).toBe(true);
    const all = [...entries, answer(6, 'approval-c', 'deny')];
    expect(hasOpenApproval(all, deriveApprovals(all))).toBe(false);
  });
});
