/**
 * Inline sidechains: lines with `isSidechain: true` inside a main session
 * file are a subagent's conversation (older Claude Code wrote them there
 * before subagents got files of their own). They are not part of the main
 * conversation; each chain is a child session attached to the `Task` /
 * `Agent` call that started it.
 *
 * A chain is a root line (a sidechain line whose `parentUuid` names no
 * earlier sidechain line) and every sidechain line that descends from it.
 * A root belongs to the first unclaimed Task/Agent call whose `prompt` is the
 * root's first text; failing that, to the earliest unclaimed call made
 * before it; failing that, it stands alone under its root uuid.
 *
 * The grouping works on `LineFacts`, so discovery (which skims lines) and
 * loading (which parses them) cannot disagree.
 */
import type { JsonObject } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import type { ClaudeLine } from './records.ts';

export interface TaskCall {
  id: string;
  prompt?: string;
  description?: string;
}

/** What grouping needs to know of one line; the two functions are asked only where needed. */
export interface LineFacts {
  /** `isSidechain: true` on a conversation (or system) line. */
  sidechain: boolean;
  /** A `user` / `assistant` line. */
  entry: boolean;
  uuid?: string;
  parentUuid?: string;
  /** Task/Agent calls the line makes (asked of main assistant lines). */
  calls(): TaskCall[];
  /** The line's first user text (asked of chain roots). */
  prompt(): string | undefined;
}

export interface Sidechain {
  /** The id of the Task/Agent call that started the chain, else the root's uuid. */
  key: string;
  /** Indices of the chain's lines, in file order. */
  lines: number[];
  /** The call's `description`, a title for the child session. */
  description?: string;
}

export interface SidechainSplit {
  /** Indices of every line that is not in a sidechain. */
  main: number[];
  chains: Sidechain[];
}

const TASK_TOOLS = new Set(['Task', 'Agent']);

export function groupSidechains(lines: readonly LineFacts[]): SidechainSplit {
  const all = lines.map((_, i) => i);
  // A file that is all sidechain (a subagent's own file) is that conversation.
  if (!lines.some((l) => l.entry && !l.sidechain)) return { main: all, chains: [] };
  if (!lines.some((l) => l.sidechain)) return { main: all, chains: [] };
  const main: number[] = [];
  const chains: Sidechain[] = [];
  const chainOf = new Map<string, Sidechain>();
  const calls: (TaskCall & { at: number; claimed: boolean })[] = [];
  lines.forEach((l, i) => {
    if (!l.sidechain) {
      main.push(i);
      if (l.entry) for (const c of l.calls()) calls.push({ ...c, at: i, claimed: false });
      return;
    }
    let chain = l.parentUuid !== undefined ? chainOf.get(l.parentUuid) : undefined;
    if (chain === undefined) {
      const prompt = l.prompt();
      const call =
        (prompt !== undefined ? calls.find((c) => !c.claimed && c.prompt === prompt) : undefined) ??
        calls.find((c) => !c.claimed && c.at < i);
      if (call !== undefined) call.claimed = true;
      const key = call?.id ?? l.uuid ?? `line-${i + 1}`;
      chain = {
        key,
        lines: [],
        ...(call?.description !== undefined ? { description: call.description } : {}),
      };
      chains.push(chain);
    }
    chain.lines.push(i);
    if (l.uuid !== undefined) chainOf.set(l.uuid, chain);
  });
  return { main, chains };
}

/** Task/Agent tool_use blocks of a message content. */
export function taskCalls(content: unknown): TaskCall[] {
  if (!Array.isArray(content)) return [];
  const out: TaskCall[] = [];
  for (const b of content) {
    if (!isJsonObject(b) || b.type !== 'tool_use' || typeof b.id !== 'string') continue;
    if (typeof b.name !== 'string' || !TASK_TOOLS.has(b.name)) continue;
    const input = isJsonObject(b.input) ? b.input : {};
    out.push({
      id: b.id,
      ...(typeof input.prompt === 'string' ? { prompt: input.prompt } : {}),
      ...(typeof input.description === 'string' ? { description: input.description } : {}),
    });
  }
  return out;
}

/** The first text of a user message: a string content or its first text block. */
export function firstText(message: unknown): string | undefined {
  if (!isJsonObject(message)) return undefined;
  const content = message.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const block = content.find((b) => isJsonObject(b) && b.type === 'text' && typeof b.text === 'string');
  return block === undefined ? undefined : ((block as JsonObject).text as string);
}

/** Facts of a parsed line. */
function factsOf(line: ClaudeLine): LineFacts {
  if (line.kind !== 'record')
    return { sidechain: false, entry: false, calls: () => [], prompt: () => undefined };
  const json = line.json as JsonObject;
  const entry = line.shape === 'entry';
  return {
    sidechain: json.isSidechain === true,
    entry,
    ...(typeof json.uuid === 'string' ? { uuid: json.uuid } : {}),
    ...(typeof json.parentUuid === 'string' ? { parentUuid: json.parentUuid } : {}),
    calls: () =>
      entry && json.type === 'assistant' && isJsonObject(json.message) ? taskCalls(json.message.content) : [],
    prompt: () => (entry && json.type === 'user' ? firstText(json.message) : undefined),
  };
}

export function splitSidechains(records: readonly ClaudeLine[]): SidechainSplit {
  // Most files have no sidechain line: no facts to gather then.
  if (!records.some((r) => r.kind === 'record' && (r.json as JsonObject).isSidechain === true))
    return { main: records.map((_, i) => i), chains: [] };
  return groupSidechains(records.map(factsOf));
}

/** The child session id of a sidechain: `<call or root id>@<file session id>`. */
export function sidechainSessionId(fileId: string, key: string): string {
  return `${key}@${fileId}`;
}

/** The file id and chain key of a sidechain session id, or undefined for a plain id. */
export function parseSidechainSessionId(id: string): { fileId: string; key: string } | undefined {
  const at = id.lastIndexOf('@');
  if (at <= 0 || at === id.length - 1) return undefined;
  return { key: id.slice(0, at), fileId: id.slice(at + 1) };
}
