/**
 * The three layers every harness implements, smallest first:
 * a text codec (native text <-> native records, pure, lossless),
 * a codec (native records <-> Common, pure), and a store (the real backend).
 */
import type { Message, Meta, Transcript } from '../model/common.ts';
import type { LineSource, PulledLines } from './jsonl.ts';

/** A problem that did not stop the command: a skipped line, an unreadable dir. */
export interface Warning {
  /** File path, endpoint or other locator the problem is in. */
  source: string;
  /** 1-based line number, when the source is line-oriented. */
  line?: number;
  message: string;
}

export interface Parsed<R> {
  records: R;
  warnings: Warning[];
}

export interface TextCodec<R> {
  /** Native text to records. Never throws on a bad line: it is kept and reported. */
  parse(text: string, source?: string): Parsed<R>;
  /** Records to native text. render(parse(t).records) === t for any text t. */
  render(records: R): string;
}

export interface CodecContext {
  /** The session id, used for synthetic ids and as Common meta.id when the native form has none. */
  sessionId: string;
  /** Fallback session timestamp (RFC 3339) when the native form has none. */
  timestamp?: string;
  /**
   * Filled by codecs that know which messages the native form gives no time: their indexes (their
   * Common timestamp is borrowed from the nearest known one).
   */
  untimed?: Set<number>;
  /**
   * The real time of a user message by its address (`t3u`), when another source knows it (Grok
   * Bot: the agent's ledger entry of that id); dates the user record carrying that tag.
   */
  addressTime?: (address: string) => string | undefined;
}

export interface Codec<R> {
  toCommon(records: R, ctx: CodecContext): Transcript;
  fromCommon(transcript: Transcript): R;
}

/** A codec context that can also collect warnings about content the codec skipped. */
export interface WarningContext extends CodecContext {
  onWarning?: (warning: Warning) => void;
  /** Locator used in warnings (a file path). */
  source?: string;
}

/** A Codec whose toCommon also accepts a warning sink (a WarningContext is a CodecContext). */
export interface WarningCodec<R> extends Codec<R> {
  toCommon(records: R, ctx: WarningContext): Transcript;
}

export interface SessionSummary {
  id: string;
  harness: string;
  title?: string;
  messageCount?: number;
  /** RFC 3339 UTC of the last activity seen. */
  lastActivity?: string;
  /** Where the session lives (a file or folder path, or a URL). */
  locator: string;
  /** The parent session, for subagent transcripts. */
  parentId?: string;
}

export interface DiscoverResult {
  sessions: SessionSummary[];
  warnings: Warning[];
}

export interface LoadResult {
  transcript: Transcript;
  /** Which source the conversation came from, e.g. a JSONL path, `store.db`, or a gateway URL. */
  source: string;
  warnings: Warning[];
  /** Indexes of messages whose time the source does not give (views leave it out); absent when every time is real. */
  untimed?: ReadonlySet<number>;
}

/**
 * A session read in memory that does not grow with its length: the source is
 * read once for the meta and the count, and again, one message at a time, by
 * each call of `messages()`. Its meta and messages are those `load` gives.
 */
export interface StreamedTranscript {
  meta: Meta;
  /** How many messages `messages()` gives. */
  count: number;
  /** The text layer's warnings, in line order, then the codec's (read once, on the first pass). */
  warnings: Warning[];
  messages(): Iterable<Message>;
}

/** A streamed session and the source it came from (LoadResult `source`). */
export interface StreamedLoad extends StreamedTranscript {
  source: string;
}

export interface SaveResult {
  id: string;
  locator: string;
}

export interface DiscoverOptions {
  /** Called with progress while scanning; the CLI shows it on stderr after a second. */
  onProgress?: (done: number, total: number) => void;
  /** false: read every source, and neither use nor update a store's summary cache (`list --no-cache`). */
  cache?: boolean;
}

export interface Store {
  discover(options?: DiscoverOptions): Promise<DiscoverResult>;
  /**
   * `listedAt`: the locator a listing gave this session, which a store may
   * read directly rather than look the id up (a file store searching its
   * folders for every load is most of a scan's time); a locator that no
   * longer fits the id is ignored.
   */
  load(id: string, listedAt?: string): Promise<LoadResult>;
  /**
   * The sources (files) that hold a session listed under exactly this id,
   * found without reading any: every one `discover` would list it from, and
   * one listed from each that holds a conversation. undefined: the store
   * cannot tell without listing.
   */
  locate?(id: string): Promise<string[] | undefined>;
  save?(transcript: Transcript): Promise<SaveResult>;
  /**
   * The session `load` gives, streamed (StreamedTranscript); undefined when
   * this session cannot be streamed (then load it).
   */
  stream?(id: string): Promise<StreamedLoad | undefined>;
}

/** A store that can write (every store with a managed location). */
export type SavingStore = Store & Required<Pick<Store, 'save'>>;

export interface Harness<R = unknown> {
  /** Canonical id, e.g. `grok_bot`. */
  id: string;
  aliases: readonly string[];
  text: TextCodec<R>;
  codec: Codec<R>;
  /**
   * Every searchable text of a listed session is in its locator file (or its
   * `textFiles`) as JSON
   * string text (UTF-8 or JSON escapes) or as JavaScript prints a number,
   * its title and typed tool names aside, so search's scan may skip a file whose bytes lack a wanted word
   * (search/byte-filter.ts). Set only for formats checked to be so.
   */
  textInSource?: boolean;
  /**
   * With `textInSource`: words beyond search's own list (search/scan.ts
   * DERIVED) that this harness's codec may put into a session's searchable
   * text without its file spelling them (a default tool name).
   */
  derivedWords?: readonly string[];
  /**
   * With `textInSource`: the codec may print a number its file spells
   * otherwise (pi's bash timeout, seconds in the file, milliseconds in
   * Common), so a wanted term of digits alone proves nothing.
   */
  derivedNumbers?: boolean;
  /**
   * With `textInSource`: every message's searchable text comes from one line
   * of its file (a message is never made of several lines), so search's byte
   * pass may ask one line to hold every wanted word (byte-filter.ts).
   */
  messageInOneLine?: boolean;
  /**
   * With `textInSource`: the files that hold the searchable text of a
   * session listed at `locator`, when they are not the locator alone (a
   * folder of logs, a record beside its transcript). Files that are not
   * there are left out; the locator itself counts only when listed.
   */
  textFiles?: (locator: string) => Promise<string[]>;
  /**
   * For a harness whose sessions are rows of a database: of the listed
   * sessions, the locators whose stored rows may hold every needle (search's
   * byte check asked of the database, harness/sqlite-text-check.ts). Set
   * only for formats checked to keep every searchable text in the rows it
   * checks; `derivedWords` and `derivedNumbers` apply as with `textInSource`.
   */
  mayHold?: (
    sessions: ReadonlyArray<{ locator: string; titles: readonly string[] }>,
    needles: readonly string[],
  ) => Promise<Set<string>>;
  /** Harnesses with a managed location (not `simple`) have a store. */
  store?: (env?: NodeJS.ProcessEnv) => Store;
  /**
   * Common from native lines read one by one, each dropped once read, for
   * sessions too big to hold whole: the transcript `codec.toCommon` gives for
   * `text.parse`'s records; the text layer's warnings are returned, the
   * codec's given to `ctx.onWarning`. Harnesses without it are read whole.
   */
  readCommon?: (
    lines: LineSource,
    source: string,
    ctx: WarningContext,
  ) => { transcript: Transcript; warnings: Warning[] };
  /**
   * The transcript `readCommon` gives, streamed (StreamedTranscript) from
   * lines that can be read again: codec warnings go to `ctx.onWarning`, once.
   */
  streamCommon?: (lines: PulledLines, source: string, ctx: WarningContext) => StreamedTranscript;
  /**
   * The native text of a transcript in pieces, each made when it is asked
   * for: joined, `text.render(codec.fromCommon(transcript))`. Harnesses
   * without it render whole.
   */
  renderCommon?: (transcript: Transcript) => Iterable<string>;
}
