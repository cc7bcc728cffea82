/**
 * Message ids and addresses (grok-bot-format.md §4 and §6 "Message and entry
 * id patterns"; decision C6).
 *
 * Ids the box writes use a decimal turn number. The `[tNu]` tag grammar
 * accepts base-36 characters in the turn (C6, after the routing proxy that
 * reads tags as base 36), so tags written by other hosts are still
 * recognised; ids are never written in base 36, because turn 11 would then
 * read `tb…`, which already means the boot turn.
 */

/** The turn before any user message ("boot"): sends `tbs<k>`, assistant messages `tba<k>`. */
export const BOOT_TURN = 'boot';
export type Turn = number | typeof BOOT_TURN;
/** Id of the boot notice entry. */
export const BOOT_NOTICE_ID = 'tb';

function index(n: number, what: string): string {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new RangeError(`${what} must be a non-negative integer, got ${n}`);
  return String(n);
}

function turnPart(turn: Turn): string {
  return turn === BOOT_TURN ? 'b' : index(turn, 'turn');
}

/** `t<n>u`: user message n, which is also the address its `[t<n>u]` tag shows. */
export function userMessageId(turn: number): string {
  return `t${index(turn, 'turn')}u`;
}

/** `t<n>ua<k>`: attachment k the user sent with message n. */
export function userAttachmentId(turn: number, k: number): string {
  return `t${index(turn, 'turn')}ua${index(k, 'attachment index')}`;
}

/** `t<n>a<k>` (`tba<k>` in the boot turn): assistant entry k of the turn. */
export function assistantId(turn: Turn, k: number): string {
  return `t${turnPart(turn)}a${index(k, 'assistant index')}`;
}

/** `t<n>s<k>` (`tbs<k>` in the boot turn): send_message k of the turn. */
export function sendId(turn: Turn, k: number): string {
  return `t${turnPart(turn)}s${index(k, 'send index')}`;
}

export type MessageId =
  | { kind: 'user'; turn: number }
  | { kind: 'user-attachment'; turn: number; index: number }
  | { kind: 'assistant'; turn: Turn; index: number }
  | { kind: 'send'; turn: Turn; index: number }
  | { kind: 'boot-notice' };

/** Reads an id written by the helpers above; undefined for anything else. */
export function parseMessageId(id: string): MessageId | undefined {
  if (id === BOOT_NOTICE_ID) return { kind: 'boot-notice' };
  const m = /^t(\d+|b)(u|ua|a|s)(\d*)$/.exec(id);
  if (m === null) return undefined;
  const [, rawTurn = '', suffix, rawIndex = ''] = m;
  const turn: Turn = rawTurn === 'b' ? BOOT_TURN : Number(rawTurn);
  const idx = Number(rawIndex);
  if (suffix === 'u') return rawIndex === '' && turn !== BOOT_TURN ? { kind: 'user', turn } : undefined;
  if (rawIndex === '') return undefined;
  if (suffix === 'ua') return turn === BOOT_TURN ? undefined : { kind: 'user-attachment', turn, index: idx };
  if (suffix === 'a') return { kind: 'assistant', turn, index: idx };
  return { kind: 'send', turn, index: idx };
}

/** `[t<n>u]`, the tag the box puts first on a user record it writes (C6). */
export function addressTag(turn: number): string {
  return `[${userMessageId(turn)}]`;
}

/** The user text as the box records it: tag, newline, text (C6). */
export function withAddressTag(turn: number, text: string): string {
  return `${addressTag(turn)}\n${text}`;
}

export interface AddressTag {
  /** The tag as found, e.g. `[t3u]`. */
  tag: string;
  /** The address inside the brackets, e.g. `t3u`; what `reply_to` takes. */
  address: string;
  /** The turn characters as written (base 36 allowed). */
  turn: string;
  /** The turn as a number when it is written in decimal digits, as the box writes it. */
  turnNumber: number | undefined;
  /** The optional letter after the turn (`u` for a user message). */
  letter: string | undefined;
  /** The text after the tag, minus one following `\r\n`, `\n` or space (C6). */
  rest: string;
}

/**
 * Reads a leading `[t<turn><letter>?]` tag (C6). A final letter after at
 * least one turn character is the letter: `[t3u]` is turn 3, letter u;
 * `[t12]` is turn 12 with no letter.
 */
export function parseAddress(text: string): AddressTag | undefined {
  const m = /^\[t([0-9a-z]+)\](\r\n|\n| )?/.exec(text);
  if (m === null) return undefined;
  const [tag = '', body = '', separator = ''] = m;
  const hasLetter = body.length > 1 && /[a-z]$/.test(body);
  const turn = hasLetter ? body.slice(0, -1) : body;
  const letter = hasLetter ? body.slice(-1) : undefined;
  return {
    tag: tag.slice(0, tag.length - separator.length),
    address: `t${body}`,
    turn,
    turnNumber: /^\d+$/.test(turn) ? Number(turn) : undefined,
    letter,
    rest: text.slice(tag.length),
  };
}

/**
 * The first line of a user message that answers a widget or secret request:
 * `[Answering your question <id>: "<prompt>"]` (grok-bot-format.md §4). The
 * prompt is kept on one line so the line can be read back.
 */
export function answerPrefix(id: string, prompt: string): string {
  return `[Answering your question ${id}: "${oneLine(prompt)}"]`;
}

/** The answer prefix, a newline, and the answer. */
export function answerMessage(id: string, prompt: string, answer: string): string {
  return `${answerPrefix(id, prompt)}\n${answer}`;
}

export interface ParsedAnswer {
  /** The id of the send being answered, e.g. `t0s3` or `tbs1`. */
  id: string;
  prompt: string;
  /** The text after the prefix and one following line break or space. */
  answer: string;
}

/** Reads a leading answer prefix; undefined when the text has none. */
export function parseAnswerPrefix(text: string): ParsedAnswer | undefined {
  const m = /^\[Answering your question ([^\s:\]]+): "(.*)"\](\r\n|\n| )?/.exec(text);
  if (m === null) return undefined;
  const [whole = '', id = '', prompt = ''] = m;
  return { id, prompt, answer: text.slice(whole.length) };
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}
