/**
 * Searching what every agent said and was told, for the sidebar: txcript's search index (FTS5
 * trigram + word index, BM25, snippets) over the box's own Grok Bot files, read by txcript's
 * `grok_bot` store as `txcript search` reads them: the data dir's, or on a cluster worker its local
 * copy of every agent's rows (session-files.ts). The index file lives in the data dir's cache
 * folder and survives restarts (a source is read again only when its signature changed).
 *
 * Kept current as agents write, without a rebuild per keypress: a write marks the index stale, and
 * the next query refreshes it first, reading only the sources that changed since (txcript's
 * refresh); a query with nothing written since runs on the index as it is.
 */
import path from 'node:path';
import type Database from 'better-sqlite3';
import {
  CliError,
  createContext,
  findHits,
  foldCase,
  grokBot,
  parseQuery,
  rowId,
  SessionIndex,
  type CliContext,
  type Hit,
  type Kind,
} from '@sendbox/txcript';
import type { HostEvent } from '../agent/events.ts';
import { HostError } from '../agent/errors.ts';
import { dataDirSessionFiles, type SessionFiles } from './session-files.ts';

/** One message that matched, as the sidebar shows it. */
export interface MessageHit {
  agentId: string;
  /** The agent's title as indexed (its name, or its first prompt). */
  title: string | null;
  /** 1-based message number in the agent's transcript, as `txcript view` numbers it; 0: the title. */
  message: number;
  /** What matched: `user` (the user's words), `assistant` (a message to the user), `thinking`, a tool's input or output, or the `title`. */
  kind: Kind;
  snippet: { text: string; highlights: Array<[number, number]> };
  /**
   * Where the page finds the message among the agent's entries: the `occurrence`-th (1-based)
   * entry of that kind whose text holds `needle` (lower case). Absent for a title hit.
   */
  place?: { needle: string; occurrence: number };
  /** When the agent last did something (RFC 3339), if known. */
  lastActivity: string | null;
}

export interface MessageSearchOptions {
  dataDir: string;
  /** Where the sessions are read (default: the data dir's own files). */
  files?: SessionFiles;
  /** Notes from the index (a damaged file rebuilt, an unreadable transcript): one line each. */
  log?: (line: string) => void;
}

export const MAX_HITS = 50;

/** Where txcript keeps the search's cache (a killed box may leave its temp files there). */
export function searchCacheDir(dataDir: string): string {
  return path.join(dataDir, 'cache', 'txcript');
}

export class MessageSearch {
  private readonly ctx: CliContext;
  private readonly index: SessionIndex;
  private readonly files: SessionFiles;
  /** Whether an agent wrote since the last refresh started (the first query refreshes regardless). */
  private stale = true;

  constructor(options: MessageSearchOptions) {
    const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    let pending = '';
    const stderr = {
      write(chunk: string | Uint8Array): boolean {
        pending += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) if (line.trim() !== '') log(`search: ${line}`);
        return true;
      },
    };
    const { dataDir } = options;
    this.files = options.files ?? dataDirSessionFiles(dataDir);
    this.ctx = createContext({
      stdout: { write: () => true },
      stderr,
      readStdin: () => Promise.resolve(''),
      // The box's own files, never the user's: its transcripts and agents, its cache folder.
      env: {
        HOME: dataDir,
        XDG_CACHE_HOME: path.dirname(searchCacheDir(dataDir)),
        TXCRIPT_GROK_BOT_ROOT: this.files.transcripts,
        TXCRIPT_GROK_BOT_AGENTS: this.files.agents,
        NO_COLOR: '1',
      },
      now: () => new Date(),
      harnesses: [grokBot],
    });
    this.index = new SessionIndex(this.ctx);
  }

  /** Follow the host: an entry written, or an agent created or deleted, makes the index stale. */
  observe(event: HostEvent): void {
    if (event.type === 'entry' || event.type === 'roster') this.stale = true;
  }

  private warming: NodeJS.Timeout | undefined;

  /**
   * Index every agent in the background, `afterMs` from now (at start, so the first query rarely
   * waits, and a box that only starts and stops reads nothing).
   */
  warm(afterMs = 1_000): void {
    this.warming = setTimeout(() => {
      this.stale = false;
      void this.files.settle().then(
        () => this.index.warm(),
        () => this.index.warm(),
      );
    }, afterMs);
    this.warming.unref();
  }

  /** The best `limit` messages matching `query` (txcript's query syntax: words, "a phrase", -not, typo~). */
  async search(query: string, limit = 20): Promise<MessageHit[]> {
    let parsed;
    try {
      parsed = parseQuery(query);
    } catch (error) {
      if (error instanceof CliError) throw new HostError(`${error.message}: ${error.todo ?? ''}`.trim(), 400);
      throw error;
    }
    const maxAgeMs = this.stale ? 0 : Infinity;
    if (this.stale) {
      this.stale = false;
      // What the host told of is in the files before the index reads them (a cluster's copy).
      await this.files.settle();
    }
    return this.index.use(
      undefined,
      (index) => {
        const hits = findHits(index, parsed, { limit: Math.min(limit, MAX_HITS) });
        return hits.map((hit) => this.view(hit, (lo, hi, kind) => texts(index.db, lo, hi, kind)));
      },
      maxAgeMs,
    );
  }

  private view(hit: Hit, textsOf: (lo: bigint, hi: bigint, kind: Kind) => string[]): MessageHit {
    const { session, message, kind, snippet } = hit;
    const base: MessageHit = {
      agentId: session.id,
      title: session.title,
      message,
      kind,
      snippet,
      lastActivity: session.lastActivity,
    };
    const first = snippet.highlights[0];
    if (message === 0 || first === undefined) return base;
    const needle = foldCase(snippet.text.slice(first[0], first[1]));
    // How many messages up to this one hold the needle in the same kind: the page counts entries the same way.
    const before = textsOf(rowId(session.key, 1), rowId(session.key, message), kind);
    const occurrence = before.filter((text) => foldCase(text).includes(needle)).length;
    return { ...base, place: { needle, occurrence: Math.max(1, occurrence) } };
  }

  close(): Promise<void> {
    clearTimeout(this.warming);
    return this.index.stop();
  }
}

/** The `kind` texts of the rows from `lo` to `hi`, in order. */
function texts(db: Database.Database, lo: bigint, hi: bigint, kind: Kind): string[] {
  return db
    .prepare(`SELECT ${kind} FROM messages WHERE rowid BETWEEN ? AND ? ORDER BY rowid`)
    .pluck()
    .all(lo, hi) as string[];
}
