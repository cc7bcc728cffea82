/**
 * The protobuf turn graph a Cursor session needs beside its JSON message
 * blobs: the CLI resumes from the `latestRootBlobId` of the agent record, a
 * root whose turns point (by SHA-256) at a user message and its steps.
 * Cursor publishes no schema; the field numbers are the ones the Rust
 * txcript 0.10 writes (`src/harness/cursor.rs`, from its authors' reading of
 * real sessions), and docs/formats/cursor.md lists them. Shell, Read and
 * Edit/Write calls get Cursor's own step kinds; every other tool becomes a
 * text step that says what was called and what came back, so the resumed
 * agent still sees it.
 */
import type { Block, EditOp, Message, Meta, Tool, ToolOutput } from '../../model/common.ts';
import { uuidV5 } from '../../model/uuid.ts';
import { PbWriter } from '../protobuf.ts';
import { sha256Hex, type CursorBlob } from './records.ts';
import { commonToolToCursor } from './tools.ts';

/** Namespace of the user-message ids in the graph (fixed, random). */
const MESSAGE_NS = '0b8e3f52-7c1d-4a96-b2e4-5d7f9a1c3e60';

interface Result {
  content: ToolOutput;
  isError: boolean;
}

type Step =
  | { kind: 'text'; text: string }
  | { kind: 'thinking'; text: string }
  | { kind: 'tool'; id: string; tool: Tool; result?: Result };

interface Turn {
  userText: string;
  steps: Step[];
}

export const outputText = (c: ToolOutput): string => (typeof c === 'string' ? c : JSON.stringify(c));

/** Lines as the CLI counts them (a trailing newline ends the last line, it does not start one). */
function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

function userText(blocks: readonly Block[]): string {
  const parts: string[] = [];
  for (const b of blocks) {
    if (b.type === 'text' && b.text.trim() !== '') parts.push(b.text.trim());
    else if (b.type === 'image') parts.push(`[image: ${b.source.media_type}]`);
  }
  return parts.join('\n\n');
}

function turnsOf(meta: Meta, messages: readonly Message[]): Turn[] {
  const results = new Map<string, Result>();
  for (const m of messages)
    for (const b of m.content)
      if (b.type === 'tool_result')
        results.set(b.tool_use_id, { content: b.content, isError: b.is_error === true });
  const turns: Turn[] = [];
  let current: Turn | undefined;
  for (const m of messages) {
    if (m.role === 'user') {
      const text = userText(m.content);
      if (text !== '') turns.push((current = { userText: text, steps: [] }));
      continue;
    }
    current ??= turns[turns.push({ userText: meta.title ?? 'Continue.', steps: [] }) - 1]!;
    for (const b of m.content) {
      if (b.type === 'text' && b.text.trim() !== '')
        current.steps.push({ kind: 'text', text: b.text.trim() });
      else if (b.type === 'thinking' && b.text.trim() !== '')
        current.steps.push({ kind: 'thinking', text: b.text.trim() });
      else if (b.type === 'tool_use') {
        const result = results.get(b.id);
        current.steps.push({
          kind: 'tool',
          id: b.id,
          tool: b.tool,
          ...(result !== undefined ? { result } : {}),
        });
      } else if (b.type === 'image')
        current.steps.push({ kind: 'text', text: `[image: ${b.source.media_type}]` });
    }
  }
  return turns;
}

function textStep(text: string): PbWriter {
  return new PbWriter().message(1, new PbWriter().string(1, text));
}

function shellCall(
  tool: Extract<Tool, { name: 'Bash' }>,
  id: string,
  cwd: string,
  result: Result | undefined,
): PbWriter {
  const args = new PbWriter().string(1, tool.command).string(2, tool.workdir ?? cwd);
  if (tool.timeout_ms !== undefined && tool.timeout_ms <= 0xffffffff) args.varint(3, tool.timeout_ms);
  args.string(4, id);
  if (tool.run_in_background === true) args.varint(11, 1).varint(13, 2);
  args.string(15, tool.description);
  const shell = new PbWriter().message(1, args);
  if (result !== undefined) {
    const outcome = new PbWriter()
      .string(1, tool.command)
      .string(2, tool.workdir ?? cwd)
      .varint(3, result.isError ? 1 : 0)
      .string(result.isError ? 6 : 5, outputText(result.content));
    shell.message(2, new PbWriter().message(result.isError ? 2 : 1, outcome));
  }
  return shell.string(3, tool.description);
}

function readCall(tool: Extract<Tool, { name: 'Read' }>, result: Result | undefined): PbWriter {
  const args = new PbWriter().string(1, tool.file_path);
  if (tool.offset !== undefined) args.varint(2, tool.offset);
  if (tool.limit !== undefined) args.varint(3, tool.limit);
  const read = new PbWriter().message(1, args);
  if (result === undefined) return read;
  const text = outputText(result.content);
  if (result.isError) return read.message(2, new PbWriter().message(2, new PbWriter().string(1, text)));
  const ok = new PbWriter().string(1, text);
  if (text === '') ok.varint(2, 1);
  ok.varint(4, lineCount(text)).varint(5, Buffer.byteLength(text)).string(7, tool.file_path);
  if (tool.offset !== undefined) {
    const start = tool.offset + 1;
    ok.message(8, new PbWriter().varint(1, start).varint(2, start + Math.max(lineCount(text) - 1, 0)));
  }
  return read.message(2, new PbWriter().message(1, ok));
}

function unifiedDiff(path: string, before: string | undefined, after: string): string {
  const range = (n: number): string => (n === 0 ? '0,0' : n === 1 ? '1' : `1,${n}`);
  const lines = (prefix: string, text: string): string =>
    text === ''
      ? ''
      : `${text
          .replace(/\n$/, '')
          .split('\n')
          .map((l) => prefix + l)
          .join('\n')}\n`;
  const head =
    before === undefined
      ? `--- /dev/null\n+++ b/${path}\n@@ -0,0 +${range(lineCount(after))} @@\n`
      : `--- a/${path}\n+++ b/${path}\n@@ -${range(lineCount(before))} +${range(lineCount(after))} @@\n`;
  return head + (before === undefined ? '' : lines('-', before)) + lines('+', after);
}

function editCall(
  path: string,
  before: string | undefined,
  after: string,
  result: Result | undefined,
): PbWriter {
  const edit = new PbWriter().message(1, new PbWriter().string(1, path).string(6, after));
  if (result === undefined) return edit;
  const message = outputText(result.content);
  if (result.isError) {
    const failed = new PbWriter().string(1, path).string(2, message).string(5, message);
    return edit.message(2, new PbWriter().message(7, failed));
  }
  const ok = new PbWriter()
    .string(1, path)
    .varint(3, lineCount(after))
    .varint(4, before === undefined ? 0 : lineCount(before))
    .string(5, unifiedDiff(path, before, after))
    .string(6, before)
    .string(7, after)
    .string(8, message.trim() !== '' ? message : `The file ${path} has been updated.`);
  return edit.message(2, new PbWriter().message(1, ok));
}

function joined(edits: readonly EditOp[], side: 'old_string' | 'new_string'): string {
  return edits.map((e) => e[side]).join('\n');
}

/** A tool step in Cursor's own kind, or undefined for a tool Cursor has no step kind for. */
function toolCall(step: Extract<Step, { kind: 'tool' }>, cwd: string): PbWriter | undefined {
  const { tool, id, result } = step;
  let kind: number;
  let data: PbWriter;
  switch (tool.name) {
    case 'Bash':
      [kind, data] = [1, shellCall(tool, id, cwd, result)];
      break;
    case 'Read':
      [kind, data] = [8, readCall(tool, result)];
      break;
    case 'Edit':
      [kind, data] = [12, editCall(tool.file_path, tool.old_string, tool.new_string, result)];
      break;
    case 'Write':
      [kind, data] = [12, editCall(tool.file_path, undefined, tool.content, result)];
      break;
    case 'MultiEdit':
      [kind, data] = [
        12,
        editCall(tool.file_path, joined(tool.edits, 'old_string'), joined(tool.edits, 'new_string'), result),
      ];
      break;
    case 'Raw':
    case 'Command':
      return undefined;
  }
  return new PbWriter().message(kind, data).string(57, id);
}

function toolAsText(step: Extract<Step, { kind: 'tool' }>): string {
  const { name, args } = commonToolToCursor(step.tool);
  let text = `Tool call ${name} (${step.id}):\n${JSON.stringify(args, null, 2)}`;
  if (step.result !== undefined)
    text += `\n\nTool ${step.result.isError ? 'error' : 'result'}:\n${outputText(step.result.content)}`;
  return text;
}

function stepMessage(step: Step, cwd: string): PbWriter {
  switch (step.kind) {
    case 'text':
      return textStep(step.text);
    case 'thinking':
      return new PbWriter().message(3, new PbWriter().string(1, step.text));
    case 'tool': {
      const call = toolCall(step, cwd);
      return call !== undefined ? new PbWriter().message(2, call) : textStep(toolAsText(step));
    }
  }
}

/** The graph blobs for a conversation, root last; `root` is the root blob's id. */
export function turnGraph(meta: Meta, messages: readonly Message[]): { blobs: CursorBlob[]; root: string } {
  const blobs: CursorBlob[] = [];
  const add = (w: PbWriter): Buffer => {
    const data = w.finish();
    const id = sha256Hex(data);
    blobs.push({ id, data });
    return Buffer.from(id, 'hex');
  };
  const cwd = meta.cwd ?? '';
  const turnIds = turnsOf(meta, messages).map((turn, n) => {
    const user = add(
      new PbWriter()
        .string(1, turn.userText)
        .string(2, uuidV5(MESSAGE_NS, `${meta.id}:${n}:${turn.userText}`))
        .varint(4, 1),
    );
    const steps = turn.steps.map((s) => add(stepMessage(s, cwd)));
    const agentTurn = new PbWriter().bytes(1, user);
    for (const s of steps) agentTurn.bytes(2, s);
    return add(new PbWriter().message(1, agentTurn));
  });
  const root = new PbWriter();
  for (const t of turnIds) root.bytes(8, t);
  root.varint(10, 1);
  const started = Date.parse(meta.timestamp);
  if (started > 0) root.varint(26, started);
  add(root);
  return { blobs, root: blobs[blobs.length - 1]!.id };
}
