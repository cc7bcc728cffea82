/**
 * `txcript continue --with grok_bot`: mint a NEW box agent on the live local
 * gateway and seed its history (seed 003 "Continue-into / write"):
 *
 *   1. preflight: the agents and transcripts roots exist and are writable;
 *   2. `createAgent {name, description, harness: "box"}`;
 *   3. unlock the new agent's store.db by opening another agent;
 *   4. write `transcript_entries` and `kv unreadState` (one transaction);
 *   5. write the agent-transcripts JSONL;
 *   6. `openAgent` the new id so its history shows.
 *
 * A failure after step 2 deletes the half-made agent with `deleteAgent`
 * (best effort: a delete error is reported through `onWarning` and ignored)
 * and the ORIGINAL error is thrown. A successful mint deletes nothing.
 *
 * Everything that can be checked without the box (the ledger entries, the
 * gateway config) is checked before `createAgent`, so a transcript that
 * cannot be seeded never creates an agent at all.
 *
 * Continuing a Grok Bot agent (`fromAgent`) seeds the new ledger with the
 * source's own entries and files (grok-bot-copy.ts) and its JSONL with the
 * source's JSONL text, so nothing is rebuilt through Common; other sources
 * are seeded from Common (common-to-ledger.ts, the codec).
 */
import { constants } from 'node:fs';
import { access, mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ledgerEntrySchema, type LedgerEntry } from '@sendbox/protocol';
import type { JsonObject, JsonValue, Transcript } from '../model/common.ts';
import { commonToLedger, type LedgerSeed } from '../harness/grok-bot/common-to-ledger.ts';
import { grokBotCodec } from '../harness/grok-bot/codec.ts';
import { GatewayClient } from '../harness/grok-bot/gateway.ts';
import { openLedgerForWrite } from '../harness/grok-bot/ledger-db.ts';
import { createFileAtomic, FileExistsError, writeFileAtomic } from '../fs/atomic.ts';
import { grokBotRoots } from '../harness/grok-bot/roots.ts';
import { assertSafeSessionId } from '../harness/session-id.ts';
import { grokBotText } from '../harness/grok-bot/text.ts';
import { planImages, writePlannedImages } from './box-attachments.ts';
import { withBoxTools } from './box-tools.ts';
import { copyLedger, readSourceLedger, type SourceLedger } from './grok-bot-copy.ts';
import { metadataString } from './metadata.ts';

export const DEFAULT_DESCRIPTION = 'Continued from another session by txcript';
export const DEFAULT_NAME = 'txcript session';
/** A name taken from a transcript title is cut to this many characters (a sidebar row, not a paragraph). */
export const MAX_TITLE_NAME = 120;

/** The steps after `createAgent`, in order; a fault hook can fail any of them in tests. */
export const MINT_STEPS = ['unlock', 'ledger', 'jsonl', 'open'] as const;
export type MintStep = (typeof MINT_STEPS)[number];

/** Every timed phase of a mint, in order: the two before `createAgent` returns, then the steps. */
export type MintPhase = 'preflight' | 'create' | MintStep;

export class MintError extends Error {
  override name = 'MintError';
}

export interface MintOptions {
  env?: NodeJS.ProcessEnv;
  metadata?: JsonObject;
  /** Gateway call timeout. */
  timeoutMs?: number;
  /** How long the ledger write waits on the box's store lock. */
  busyTimeoutMs?: number;
  onWarning?: (message: string) => void;
  /**
   * The id of a Grok Bot agent in the same roots that `transcript` is the whole of: its ledger,
   * files and JSONL are copied instead of rebuilt from Common (when it has a non-empty store.db).
   */
  fromAgent?: string;
  /** The harness the session comes from (`Claude Code`, `codex`…), for the agent's description. */
  origin?: string;
  /** Called before each step after createAgent; throwing fails the mint there (fault injection in tests). */
  beforeStep?: (step: MintStep, agentId: string) => void | Promise<void>;
}

export interface MintResult {
  id: string;
  name: string;
  description: string;
  /** Ledger entries written to `transcript_entries`. */
  entries: number;
  jsonlPath: string;
  storePath: string;
  /** Wall time of each phase, in milliseconds. */
  phaseMs: Record<MintPhase, number>;
}

/** The agent's display name and description from `--metadata`, with the seed's fallbacks. */
export function agentIdentity(
  transcript: Transcript,
  metadata: JsonObject = {},
  origin?: string,
): { name: string; description: string } {
  const title = transcript.meta.title?.replace(/\s+/g, ' ').trim() ?? '';
  const fromTitle =
    title === ''
      ? undefined
      : title.length > MAX_TITLE_NAME
        ? `${title.slice(0, MAX_TITLE_NAME - 1)}…`
        : title;
  return {
    name: metadataString(metadata, 'name')?.trim() ?? fromTitle ?? DEFAULT_NAME,
    description: metadataString(metadata, 'description') ?? continuedDescription(transcript, origin),
  };
}

/**
 * What the agent is told it is (the box puts the description in its system prompt): a session
 * that began elsewhere, in which folder and when, whose earlier tool calls it may read as its own.
 */
export function continuedDescription(transcript: Transcript, origin: string | undefined): string {
  const from = origin === undefined ? 'in another agent' : `in ${origin}`;
  const where = transcript.meta.cwd ? ` in the folder ${transcript.meta.cwd}` : '';
  const day = transcript.meta.timestamp.slice(0, 10);
  const when = /^\d{4}-\d{2}-\d{2}$/.test(day) && !day.startsWith('1970') ? ` on ${day}` : '';
  return (
    `${DEFAULT_DESCRIPTION}: this conversation began ${from}${where}${when} and goes on here. ` +
    `The earlier tool calls ran there; they are shown under the names of your tools.`
  );
}

async function preflight(dir: string, what: string, envNames: string): Promise<void> {
  try {
    const s = await stat(dir);
    if (!s.isDirectory()) throw new Error('not a directory');
    await access(dir, constants.W_OK);
  } catch (error) {
    throw new MintError(
      `the Grok Bot ${what} folder ${dir} is missing or not writable (${(error as Error).message}); ` +
        `start the box (npm start) or point ${envNames} at it, or use --out DIR for a JSONL-only export`,
    );
  }
}

function agentIdOf(response: JsonValue): string {
  const agent =
    typeof response === 'object' && response !== null && !Array.isArray(response)
      ? response.agent
      : undefined;
  const id = typeof agent === 'object' && agent !== null && !Array.isArray(agent) ? agent.id : undefined;
  if (typeof id !== 'string') {
    throw new MintError(
      `createAgent answered without an agent id: ${JSON.stringify(response).slice(0, 200)}`,
    );
  }
  assertSafeSessionId(id);
  return id;
}

function rosterIds(response: JsonValue): string[] {
  const rows = Array.isArray(response)
    ? response
    : typeof response === 'object' && response !== null && Array.isArray(response.agents)
      ? response.agents
      : [];
  return rows.flatMap((row) =>
    typeof row === 'object' && row !== null && !Array.isArray(row) && typeof row.id === 'string'
      ? [row.id]
      : [],
  );
}

/** Refuse a seed the ledger would refuse, before any agent exists. */
function assertValidEntries(entries: readonly unknown[]): void {
  entries.forEach((entry, i) => {
    const parsed = ledgerEntrySchema.safeParse(entry);
    if (parsed.success) return;
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '(entry)' : issue.path.join('.');
    throw new MintError(
      `ledger entry ${i} made from the transcript is not valid: ${where}: ${issue?.message ?? 'invalid'}; no agent was created`,
    );
  });
}

export async function mintGrokBotAgent(
  transcript: Transcript,
  options: MintOptions = {},
): Promise<MintResult> {
  const env = options.env ?? process.env;
  const warn = options.onWarning ?? ((m: string) => process.stderr.write(`txcript: warning: ${m}\n`));
  const phaseMs = {} as Record<MintPhase, number>;
  let mark = performance.now();
  const lap = (phase: MintPhase): void => {
    const now = performance.now();
    phaseMs[phase] = now - mark;
    mark = now;
  };

  const roots = grokBotRoots(env);
  await preflight(roots.agents, 'agents', 'TXCRIPT_GROK_BOT_AGENTS');
  await preflight(roots.transcripts, 'agent-transcripts', 'TXCRIPT_GROK_BOT_ROOT (or GROK_BOT_TRANSCRIPTS)');
  const { name, description } = agentIdentity(transcript, options.metadata, options.origin);
  const source = fromAgentSource(roots, options.fromAgent);
  // Another harness's session: its tools under the box's names, its user images as uploads.
  const boxTranscript = source === undefined ? withBoxTools(transcript) : transcript;
  const images = planImages(boxTranscript);
  const seedIn = (agentDir: string): LedgerSeed =>
    commonToLedger(images.transcript(join(agentDir, 'attachments')));
  if (source === undefined) assertValidEntries(seedIn(join(roots.agents, 'new-agent')).entries);
  const sourceJsonl = source === undefined ? undefined : await readJsonlText(source.jsonlPath);
  const gateway = await GatewayClient.fromEnv(env, options.timeoutMs);
  lap('preflight');

  const id = agentIdOf(await gateway.call('createAgent', { name, description, harness: 'box' }));
  lap('create');

  const storePath = join(roots.agents, id, 'store.db');
  const jsonlPath = join(roots.transcripts, id, `${id}.jsonl`);
  let current: MintStep = MINT_STEPS[0];
  let entryCount = 0;
  const step = async (s: MintStep): Promise<void> => {
    current = s;
    await options.beforeStep?.(s, id);
  };
  try {
    await step('unlock');
    const other = rosterIds(await gateway.call('listAgents', {})).find((candidate) => candidate !== id);
    if (other === undefined) {
      throw new MintError(
        `cannot unlock the new agent's store: the box has no other agent to focus (create any agent in the box, then retry)`,
      );
    }
    await gateway.call('openAgent', { id: other });
    lap('unlock');

    await step('ledger');
    await mkdir(join(roots.agents, id), { recursive: true, mode: 0o700 });
    let written: { entries: readonly LedgerEntry[]; lastActivityAt: number };
    if (source !== undefined) {
      const copy = await copyLedger(source.ledger, join(roots.agents, id));
      for (const line of copy.left) warn(line);
      written = copy;
    } else {
      await writePlannedImages(images, join(roots.agents, id, 'attachments'));
      written = seedIn(join(roots.agents, id));
    }
    const ledger = openLedgerForWrite(storePath, { busyTimeoutMs: options.busyTimeoutMs ?? 5000 });
    try {
      ledger.appendEntries(written.entries);
      // Listed by when it was continued, not when the source last moved: a new agent comes first.
      const continuedAt = Math.max(Date.now(), written.lastActivityAt);
      ledger.setKv('unreadState', {
        lastActivityAt: continuedAt,
        lastViewedAt: continuedAt,
        isManuallyUnread: false,
        unreadCount: 0,
      });
    } finally {
      ledger.close();
    }
    entryCount = written.entries.length;
    lap('ledger');

    await step('jsonl');
    await mkdir(join(roots.transcripts, id), { recursive: true, mode: 0o700 });
    // The source's own records when there are some: nothing re-encoded, no time invented.
    const text =
      sourceJsonl ??
      grokBotText.render(grokBotCodec.fromCommon({ ...boxTranscript, meta: { ...boxTranscript.meta, id } }));
    await writeJsonl(jsonlPath, text);
    lap('jsonl');

    await step('open');
    await gateway.call('openAgent', { id });
    lap('open');
    return { id, name, description, entries: entryCount, jsonlPath, storePath, phaseMs };
  } catch (error) {
    try {
      await gateway.call('deleteAgent', { id });
      warn(`the mint failed at step "${current}"; the new agent ${id} was deleted again`);
    } catch (deleteError) {
      warn(
        `the mint failed at step "${current}" and deleteAgent ${id} failed too (ignored: ${(deleteError as Error).message}); ` +
          `the half-made agent "${name}" may still be in the box: delete it there`,
      );
    }
    throw error;
  }
}

/** The Grok Bot agent a mint copies from: its ledger (when non-empty) and where its JSONL is. */
function fromAgentSource(
  roots: ReturnType<typeof grokBotRoots>,
  fromAgent: string | undefined,
): { ledger: SourceLedger; jsonlPath: string } | undefined {
  if (fromAgent === undefined) return undefined;
  assertSafeSessionId(fromAgent);
  const ledger = readSourceLedger(join(roots.agents, fromAgent));
  return ledger === undefined
    ? undefined
    : { ledger, jsonlPath: join(roots.transcripts, fromAgent, `${fromAgent}.jsonl`) };
}

async function readJsonlText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Write the JSONL as a new file; an empty placeholder the box made for the agent may be replaced. */
async function writeJsonl(path: string, text: string): Promise<void> {
  try {
    await createFileAtomic(path, text);
  } catch (error) {
    if (!(error instanceof FileExistsError)) throw error;
    const existing = await stat(path);
    if (existing.size !== 0) throw error;
    // An empty placeholder the box made for the agent: replace it in one rename.
    await writeFileAtomic(path, text);
  }
}
