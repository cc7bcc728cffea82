/** The demo agent, made through the real runtime with its script, on a temp data dir. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentHost } from '../host/agent-host.ts';
import type { LocalAgentHost } from '../host/agent-host.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { DEMO_HARNESS, ensureDemoAgent } from './demo-agent.ts';
import { textPdf } from './demo-pdf.ts';

let dataDir: string;
let demoId: string;
let host: LocalAgentHost;
let entries: SequencedEntry[];

beforeAll(async () => {
  dataDir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sendbox-demo-'));
  const made = await ensureDemoAgent(dataDir);
  expect(made.created).toBe(true);
  demoId = made.id;
  // What `sendbox serve` opens without a model.
  host = await createAgentHost({ dataDir, env: {} });
  entries = await host.openAgent(demoId);
});
afterAll(async () => {
  await host.close();
  await fs.promises.rm(dataDir, { recursive: true, force: true });
});

function sends(type: string): Array<SequencedEntry & { kind: 'send-message' }> {
  return entries.filter(
    (entry): entry is SequencedEntry & { kind: 'send-message' } =>
      entry.kind === 'send-message' && entry.message.type === type,
  );
}

describe('the demo agent', () => {
  it('is listed, read-only without a model, and marked as the demo', async () => {
    const rows = await host.listAgents();
    const demo = rows.find((row) => row.id === demoId);
    expect(demo).toMatchObject({ harness: DEMO_HARNESS, readOnly: true });
    expect(host.modelStatus().configured).toBe(false);
  });

  it('holds every kind of bubble', () => {
    const kinds = new Set(entries.map((entry) => entry.kind));
    for (const kind of [
      'message',
      'thinking',
      'tool-call',
      'notice',
      'user-attachment',
      'send-message',
      'turn-ended',
    ]) {
      expect(kinds, kind).toContain(kind);
    }
    for (const type of ['text', 'attachment', 'widget', 'cursor-agent', 'secret-request']) {
      expect(sends(type).length, type).toBeGreaterThan(0);
    }
    const withImages = sends('text').filter(
      (entry) => entry.message.type === 'text' && entry.message.images?.length,
    );
    expect(withImages).toHaveLength(1);
    // The widget was answered, so its answer is in the ledger too.
    const widget = sends('widget')[0]!;
    expect(entries.some((entry) => entry.kind === 'message' && entry.replyTo === widget.id)).toBe(true);
  });

  it('attaches a real PDF from the attachment store', async () => {
    const attachment = sends('attachment')[0]!;
    const message = attachment.message as { url: string; media_type?: string; sha256?: string };
    expect(message.media_type).toBe('application/pdf');
    const file = fileURLToPath(message.url);
    expect(path.basename(file)).toBe(`${message.sha256}.pdf`);
    expect((await fs.promises.readFile(file, 'latin1')).startsWith('%PDF-1.4')).toBe(true);
  });

  it('is made once per data dir', async () => {
    const again = await ensureDemoAgent(dataDir);
    expect(again).toEqual({ id: demoId, created: false });
  });
});

describe('textPdf', () => {
  it('has a cross-reference table whose offsets point at its objects', () => {
    const pdf = textPdf('Title (with parens)', ['line one', 'back\\slash']);
    const startxref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(pdf)?.[1]);
    expect(pdf.slice(startxref, startxref + 4)).toBe('xref');
    const offsets = [...pdf.slice(startxref).matchAll(/^(\d{10}) 00000 n $/gm)].map((match) =>
      Number(match[1]),
    );
    expect(offsets).toHaveLength(5);
    offsets.forEach((offset, index) => expect(pdf.slice(offset).startsWith(`${index + 1} 0 obj`)).toBe(true));
    const length = Number(/\/Length (\d+)/.exec(pdf)?.[1]);
    const stream = pdf.slice(pdf.indexOf('stream\n') + 7, pdf.indexOf('\nendstream'));
    expect(stream.length).toBe(length);
    expect(pdf).toContain('(Title \\(with parens\\)) Tj');
  });
});
