/**
 * A Common conversation as the rows of a new Antigravity conversation
 * database (docs/formats/antigravity.md, "Writing"): one user input step per
 * user turn, one planner response step per run of assistant blocks (a
 * thinking, a text, then tool calls: a message that does not fit one is
 * split, so no block is merged or reordered), then one step per tool call
 * holding its result. Bash and Read calls become the CLI's own command and
 * view-file steps; every other call, and every result those cannot hold (an
 * error, JSON), rides the generic step, its call in the step's metadata.
 */
import type { Block, Message, Transcript, ToolOutput } from '../../model/common.ts';
import { uuidV5 } from '../../model/uuid.ts';
import { artifactText, titleFromText } from '../common-values.ts';
import { repairToolPairing } from '../orphans.ts';
import { PbWriter } from '../protobuf.ts';
import { type AntigravityDb, type StepRow, emptyDb } from './records.ts';
import { PAYLOAD_FIELD, STATUS, STEP, modelNumber, stopReasonOut } from './steps.ts';
import { commonToolToAntigravity } from './tools.ts';

/** Namespace of the ids minted for a written conversation (fixed, random). */
const NS = '9b3e4c51-7a2d-4f08-b6e1-3c5d7f9a2b64';
/** `trajectory_meta` values of a CLI conversation (the CLI's own, as observed). */
const TRAJECTORY_TYPE = 4;
const TRAJECTORY_SOURCE = 17;
/** `CortexStepMetadata.source`: a user's step, the model's step. */
const SOURCE_USER = 4;
const SOURCE_MODEL = 2;

export function fileUri(path: string): string {
  return path.startsWith('file://') ? path : `file://${path}`;
}

const outputText = (c: ToolOutput): string => (typeof c === 'string' ? c : JSON.stringify(c));

interface Result {
  content: ToolOutput;
  isError: boolean;
  at: string;
}

type ToolUse = Extract<Block, { type: 'tool_use' }>;

class Steps {
  readonly rows: StepRow[] = [];
  turn = 0;
  private readonly trajectoryId: string;

  constructor(private readonly sessionId: string) {
    this.trajectoryId = uuidV5(NS, `${sessionId}:trajectory`);
  }

  get trajectory(): string {
    return this.trajectoryId;
  }

  private metadata(at: string, source: number, extra: (m: PbWriter) => void = () => {}): PbWriter {
    const m = new PbWriter().timestamp(1, at).varint(3, source);
    extra(m);
    m.string(12, uuidV5(NS, `${this.sessionId}:${this.turn}:exec`));
    const info = new PbWriter().string(1, this.trajectoryId);
    const idx = this.rows.length;
    if (idx > 0) info.varint(2, idx);
    if (this.turn > 0) info.varint(3, this.turn - 1);
    info.string(4, this.sessionId);
    return m.message(20, info).varint(21, 1);
  }

  add(type: number, status: number, metadata: PbWriter, body: PbWriter): void {
    const meta = metadata.finish();
    const payload = new PbWriter()
      .varint(1, type)
      .varint(4, status)
      .bytes(5, meta)
      .message(PAYLOAD_FIELD[type]!, body)
      .finish();
    this.rows.push({
      idx: this.rows.length,
      step_type: type,
      status,
      has_subtrajectory: false,
      metadata: meta,
      error_details: Buffer.alloc(0),
      permissions: Buffer.alloc(0),
      task_details: Buffer.alloc(0),
      render_info: Buffer.alloc(0),
      step_payload: payload,
      step_format: 0,
    });
  }

  checkpoint(title: string, at: string): void {
    this.add(STEP.CHECKPOINT, STATUS.DONE, this.metadata(at, SOURCE_MODEL), new PbWriter().string(10, title));
  }

  user(texts: string[], images: Extract<Block, { type: 'image' }>[], at: string): void {
    this.turn++;
    const body = new PbWriter().string(2, texts.join('\n\n'));
    for (const t of texts) body.message(3, new PbWriter().string(1, t));
    for (const i of images)
      body.message(5, new PbWriter().string(1, i.source.data).string(2, i.source.media_type));
    this.add(STEP.USER_INPUT, STATUS.DONE, this.metadata(at, SOURCE_USER), body);
  }

  planner(segment: Block[], m: Message, model: number | undefined): void {
    const body = new PbWriter();
    const text = segment.find((b) => b.type === 'text');
    const thinking = segment.find((b) => b.type === 'thinking');
    body.string(1, text?.text);
    if (thinking !== undefined) body.string(3, thinking.text).string(4, thinking.signature);
    body.string(6, `bot-${uuidV5(NS, `${this.sessionId}:${this.rows.length}:msg`)}`);
    for (const b of segment) if (b.type === 'tool_use') body.message(7, callMessage(b));
    body.string(8, text?.text);
    const stop = m.stop_reason === undefined ? undefined : stopReasonOut(m.stop_reason);
    if (stop !== undefined) body.varint(12, stop);
    const metadata = this.metadata(m.timestamp, SOURCE_MODEL, (w) => {
      if (m.usage !== undefined) {
        const stats = new PbWriter();
        if (model !== undefined) stats.varint(1, model);
        stats.varint(2, m.usage.input_tokens).varint(3, m.usage.output_tokens);
        if (m.usage.cache_creation_input_tokens !== undefined)
          stats.varint(4, m.usage.cache_creation_input_tokens);
        if (m.usage.cache_read_input_tokens !== undefined) stats.varint(5, m.usage.cache_read_input_tokens);
        w.message(9, stats);
      }
      if (model !== undefined) w.varint(11, model);
    });
    this.add(STEP.PLANNER_RESPONSE, STATUS.DONE, metadata, body);
  }

  tool(use: ToolUse, result: Result | undefined, callAt: string): void {
    const native = commonToolToAntigravity(use.tool);
    const metadata = this.metadata(result?.at ?? callAt, SOURCE_MODEL, (w) => w.message(4, callMessage(use)));
    const done = result === undefined ? STATUS.PENDING : STATUS.DONE;
    const text = result !== undefined && typeof result.content === 'string' ? result.content : undefined;
    if (
      native.name === 'run_command' &&
      use.tool.name === 'Bash' &&
      (result === undefined || text !== undefined)
    ) {
      const body = new PbWriter().string(2, use.tool.workdir);
      if (result !== undefined) body.varint(6, result.isError ? 1 : 0);
      body.varint(11, 1).varint(12, 2000);
      if (text !== undefined) body.message(21, new PbWriter().string(1, text));
      body.string(23, use.tool.command).string(25, use.tool.command);
      this.add(STEP.RUN_COMMAND, done, metadata, body);
      return;
    }
    if (native.name === 'view_file' && use.tool.name === 'Read' && result?.isError !== true) {
      if (result === undefined || text !== undefined) {
        const body = new PbWriter().string(1, fileUri(use.tool.file_path));
        const args = native.args as { StartLine?: number; EndLine?: number };
        if (args.StartLine !== undefined) body.varint(2, args.StartLine);
        if (args.EndLine !== undefined) body.varint(3, args.EndLine);
        if (text !== undefined)
          body
            .string(4, text)
            .varint(11, text === '' ? 0 : text.split('\n').length)
            .varint(12, Buffer.byteLength(text));
        this.add(STEP.VIEW_FILE, done, metadata, body);
        return;
      }
    }
    const body = new PbWriter();
    if (result !== undefined) body.message(2, new PbWriter().string(1, outputText(result.content)));
    const status = result === undefined ? STATUS.PENDING : result.isError ? STATUS.ERROR : STATUS.DONE;
    this.add(STEP.GENERIC, status, metadata, body);
  }
}

/** `ChatToolCall {1: id, 2: name, 3: arguments as JSON, 9: name}` of a call in its native form. */
function callMessage(use: ToolUse): PbWriter {
  const { name, args } = commonToolToAntigravity(use.tool);
  return new PbWriter().string(1, use.id).string(2, name).string(3, JSON.stringify(args)).string(9, name);
}

/** An assistant message's blocks in runs one planner step holds: a thinking, a text, then tool calls. */
function segments(blocks: readonly Block[]): Block[][] {
  const rank = (b: Block): number => (b.type === 'thinking' ? 0 : b.type === 'tool_use' ? 2 : 1);
  const out: Block[][] = [];
  let run: Block[] = [];
  for (const b of blocks) {
    const last = run[run.length - 1];
    // A new run when this block would come before the last one, or is a second thinking or text.
    if (last !== undefined && (rank(b) < rank(last) || (rank(b) < 2 && rank(b) === rank(last)))) {
      out.push(run);
      run = [];
    }
    run.push(b);
  }
  if (run.length > 0) out.push(run);
  return out;
}

/** An assistant block as what a planner step holds: images and artifacts have no slot, and become text. */
function assistantBlock(b: Block): Block[] {
  switch (b.type) {
    case 'image':
      return [{ type: 'text', text: `[image: ${b.source.media_type}]` }];
    case 'artifact':
      return [{ type: 'text', text: artifactText(b.artifact) }];
    case 'tool_result':
      return []; // results ride tool steps
    case 'thinking':
      return b.text.trim() === '' ? [] : [b];
    case 'text':
      return b.text.trim() === '' ? [] : [b];
    case 'tool_use':
      return [b];
  }
}

/** The display log the CLI keeps beside the database, one JSON object per step. */
function displayLog(rows: readonly StepRow[]): string {
  const names: Record<number, [string, string]> = {
    [STEP.USER_INPUT]: ['USER_EXPLICIT', 'USER_INPUT'],
    [STEP.PLANNER_RESPONSE]: ['MODEL', 'PLANNER_RESPONSE'],
    [STEP.RUN_COMMAND]: ['MODEL', 'RUN_COMMAND'],
    [STEP.VIEW_FILE]: ['MODEL', 'VIEW_FILE'],
    [STEP.GENERIC]: ['MODEL', 'GENERIC'],
    [STEP.CHECKPOINT]: ['SYSTEM', 'CHECKPOINT'],
  };
  return rows
    .map((r) => {
      const [source, type] = names[r.step_type] ?? ['SYSTEM', 'UNKNOWN'];
      return `${JSON.stringify({
        step_index: r.idx,
        source,
        type,
        status: r.status === STATUS.ERROR ? 'ERROR' : r.status === STATUS.PENDING ? 'PENDING' : 'DONE',
      })}\n`;
    })
    .join('');
}

/** The rows of a new conversation database holding `input`, filed under `input.meta.id`. */
export function trajectoryRows(input: Transcript): AntigravityDb {
  const t = repairToolPairing(input);
  const id = t.meta.id;
  const steps = new Steps(id);
  const results = new Map<string, Result>();
  for (const m of t.messages)
    for (const b of m.content)
      if (b.type === 'tool_result')
        results.set(b.tool_use_id, { content: b.content, isError: b.is_error === true, at: m.timestamp });

  const firstText = t.messages.find((m) => m.role === 'user')?.content.find((b) => b.type === 'text');
  const derived = firstText?.type === 'text' ? titleFromText(firstText.text) : undefined;
  // A title the first prompt does not give rides a checkpoint, before any turn.
  if (t.meta.title !== undefined && t.meta.title !== derived)
    steps.checkpoint(t.meta.title, t.meta.timestamp);

  const model = modelNumber(t.meta.model);
  for (const m of t.messages) {
    if (m.role === 'user') {
      const texts: string[] = [];
      const images: Extract<Block, { type: 'image' }>[] = [];
      for (const b of m.content) {
        if (b.type === 'text' || b.type === 'thinking') {
          if (b.text.trim() !== '') texts.push(b.text);
        } else if (b.type === 'artifact') texts.push(artifactText(b.artifact));
        else if (b.type === 'image') images.push(b);
        else if (b.type === 'tool_use') texts.push(JSON.stringify(commonToolToAntigravity(b.tool)));
      }
      if (texts.length > 0 || images.length > 0) steps.user(texts, images, m.timestamp);
      continue;
    }
    const blocks = m.content.flatMap(assistantBlock);
    for (const segment of segments(blocks)) steps.planner(segment, m, modelNumber(m.model) ?? model);
    for (const b of blocks) if (b.type === 'tool_use') steps.tool(b, results.get(b.id), m.timestamp);
  }

  const db = emptyDb();
  db.trajectory_meta = [
    {
      trajectory_id: steps.trajectory,
      cascade_id: id,
      trajectory_type: TRAJECTORY_TYPE,
      source: TRAJECTORY_SOURCE,
    },
  ];
  db.steps = steps.rows;
  const main = new PbWriter();
  if (t.meta.cwd !== undefined && t.meta.cwd !== '') {
    const uri = fileUri(t.meta.cwd);
    main.message(1, new PbWriter().string(1, uri).string(2, uri).string(4, t.meta.git_branch));
    main.timestamp(2, t.meta.timestamp).string(6, id).string(7, uri);
  } else main.timestamp(2, t.meta.timestamp).string(6, id);
  main.string(18, 'default-cli-project');
  db.trajectory_metadata_blob = [{ id: 'main', data: main.finish() }];
  const log = displayLog(db.steps);
  db.transcript = log;
  db.transcript_full = log;
  return db;
}
