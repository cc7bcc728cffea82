/**
 * Text in a user turn that the user never typed (grok-bot-format.md §4,
 * sendbox decision C5): hidden prompts, tags the host injects, and wakes
 * (scheduled runs, agent-to-agent turns, events, answers to widgets,
 * group-chat turns). Common keeps all of it; list titles skip it, the ledger
 * marks it hidden, and the view shows it folded.
 */
import { stripAddressTag } from './address-tag.ts';

export type TextSegment = { hidden: false; text: string } | { hidden: true; kind: string; text: string };

/** Tags the host injects into user turns; their content was never typed by the user. */
const INJECTED_TAGS = ['system_reminder', 'agent_profile_update', 'instructions_update'] as const;

const HIDDEN_MARKER = /\[(?:SAND_HIDDEN_PROMPT|GROK_BOT_HIDDEN_PROMPT)[^\]\n]*\]/;

/** Wakes whose whole text is context, not the user speaking (§4 "Meta wakes"). */
const WHOLE_WAKES: ReadonlyArray<[RegExp, string]> = [
  [/^\[routine\]/i, 'routine'],
  [/^\[agent\]/i, 'agent'],
  [/^\[event\]/i, 'event'],
  [/^\[first run\]/i, 'first run'],
  [/^\[A background task just completed\]/i, 'background task'],
  [/^\[Group chat:[^\]\n]*\]/i, 'group chat'],
];

const INBOUND_KIND = 'inbound';
/** A channel message (VR): the prefix is context, the rest is a real prompt. */
const INBOUND = /^\[inbound\]/i;

/** Wakes that only prefix a real user message: the bracket is hidden, the rest is the user's. */
const PREFIX_WAKES: ReadonlyArray<[RegExp, string]> = [
  [/^\[Answering your question [^:\]\n]*: ".*?"\]/s, 'answering a question'],
  [/^\[Answering your question [^\]\n]*\]/, 'answering a question'],
  [INBOUND, INBOUND_KIND],
];

/** The kind of a known wake at the start of `text` (already trimmed), if any. */
function knownWake(text: string): string | undefined {
  for (const [re, kind] of [...WHOLE_WAKES, ...PREFIX_WAKES]) if (re.test(text)) return kind;
  return undefined;
}

/** What follows a hidden-prompt marker: a known wake, a profile update, or any short bracketed label. */
function wakeKind(text: string): string | undefined {
  const t = text.trimStart();
  const known = knownWake(t);
  if (known !== undefined) return known;
  if (t.startsWith('<<SAND_AGENT_PROFILE_UPDATE')) return 'profile update';
  const bracket = /^\[([^\]\n]{1,40})\]/.exec(t);
  return bracket?.[1];
}

function splitTags(text: string): TextSegment[] {
  const out: TextSegment[] = [];
  const open = new RegExp(`<(${INJECTED_TAGS.join('|')})>`);
  let rest = text;
  for (;;) {
    const m = open.exec(rest);
    if (m === null) break;
    const tag = m[1]!;
    const close = `</${tag}>`;
    const end = rest.indexOf(close, m.index);
    const stop = end < 0 ? rest.length : end + close.length;
    out.push({ hidden: false, text: rest.slice(0, m.index) });
    out.push({ hidden: true, kind: tag, text: rest.slice(m.index, stop) });
    rest = rest.slice(stop);
  }
  out.push({ hidden: false, text: rest });
  return out;
}

function splitWakes(text: string): TextSegment[] {
  const lead = text.length - text.trimStart().length;
  const body = text.slice(lead);
  for (const [re, kind] of WHOLE_WAKES) if (re.test(body)) return [{ hidden: true, kind, text: body }];
  for (const [re, kind] of PREFIX_WAKES) {
    const m = re.exec(body);
    if (m !== null) return [{ hidden: true, kind, text: m[0] }, ...splitTags(body.slice(m[0].length))];
  }
  return splitTags(text);
}

/**
 * Where one wake of a record that concatenates several begins: a wake tag at the start of a line
 * (VR parity fixture 01: a background-task wake, then `[routine]`, `[agent]`, `[inbound] …`,
 * a stray `[object Object]` and a group-chat wake, all in one record).
 */
const WAKE_START =
  /^\[(?:routine\]|agent\]|inbound\]|event\]|first run\]|A background task just completed\]|Answering your question\b|Group chat:|object Object\]|SAND_TRUSTED_AUTOMATION_PROMPT\])/i;

/** Host bookkeeping that can open a wake segment: hidden, never the user's. */
const HOST_SEGMENTS: ReadonlyArray<[RegExp, string]> = [
  [/^\[SAND_TRUSTED_AUTOMATION_PROMPT\]/i, 'trusted automation'],
  [/^\[object Object\]/i, 'malformed wake'],
];

/** `text` cut before each line that opens a wake; the first piece may be anything. */
function wakeSegments(text: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) {
    if (WAKE_START.test(text.slice(at + 1, at + 64))) {
      out.push(text.slice(from, at + 1));
      from = at + 1;
    }
  }
  out.push(text.slice(from));
  return out;
}

/** One wake (or the user's text): a whole wake is hidden, a prefix wake hides its bracket only. */
function splitSegment(segment: string, opaque: string | undefined): TextSegment[] {
  const body = segment.trimStart();
  for (const [re, kind] of HOST_SEGMENTS) {
    const m = re.exec(body);
    if (m !== null)
      return [{ hidden: true, kind, text: m[0] }, ...splitSegment(body.slice(m[0].length), opaque)];
  }
  if (knownWake(body) === undefined && opaque !== undefined) {
    // Text straight after a hidden-prompt marker that is no wake: the host's, not the user's.
    return body.trim() === '' ? [] : [{ hidden: true, kind: opaque, text: segment }];
  }
  return splitWakes(segment);
}

/** A run of text with no marker in it, cut into wakes when it is made of wakes. */
function splitRun(text: string, opaque: string | undefined): TextSegment[] {
  // Plain text only splits when it opens with a wake: a user's own lines are never cut.
  const cut = opaque !== undefined || WAKE_START.test(text.trimStart());
  const pieces = cut ? wakeSegments(text) : [text];
  return pieces.flatMap((piece, i) => splitSegment(piece, i === 0 ? opaque : undefined));
}

/**
 * A user text split into what the user typed and what the host injected.
 * A hidden-prompt marker hides what the host put after it; when that is a
 * record of several wakes, it is split at each one (and at each further
 * marker), so a real prompt among them (`[inbound] …`, an answer) stays
 * visible and only the injected parts are hidden. Blank segments are dropped.
 */
export function splitHiddenText(text: string): TextSegment[] {
  const marker = new RegExp(HIDDEN_MARKER.source, 'g');
  const segments: TextSegment[] = [];
  let from = 0;
  let opaque: string | undefined;
  for (let m = marker.exec(text); m !== null; m = marker.exec(text)) {
    segments.push(...splitRun(text.slice(from, m.index), opaque));
    segments.push({ hidden: true, kind: 'hidden prompt', text: m[0] });
    from = m.index + m[0].length;
    opaque = wakeKind(text.slice(from)) ?? 'hidden prompt';
  }
  segments.push(...splitRun(text.slice(from), opaque));
  // A marker and what it wraps read as one hidden piece: merge the marker into the next hidden one.
  const merged: TextSegment[] = [];
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const next = segments[i + 1];
    if (seg.hidden && seg.kind === 'hidden prompt' && HIDDEN_MARKER.test(seg.text) && next?.hidden === true) {
      merged.push({ hidden: true, kind: next.kind, text: seg.text + next.text });
      i++;
    } else merged.push(seg);
  }
  // Blank pieces go; a visible piece loses the whitespace that only separated it from a hidden one.
  const kept = merged.filter((seg) => seg.text.trim() !== '');
  return kept.map((seg, i) => {
    if (seg.hidden) return seg;
    let text = seg.text;
    if (kept[i - 1]?.hidden === true) text = text.trimStart();
    if (kept[i + 1]?.hidden === true) text = text.trimEnd();
    return { hidden: false, text: text.replace(/\s+$/, '') };
  });
}

/** `text` without a leading `[inbound]` channel prefix. */
export function stripInboundPrefix(text: string): string {
  const m = INBOUND.exec(text);
  return m === null ? text : text.slice(m[0].length);
}

/** True for a hidden prompt or a wake (after the address tag is removed): never a list title, hidden in the ledger. */
export function isHiddenOrWake(text: string): boolean {
  const t = stripAddressTag(text).trimStart();
  if (HIDDEN_MARKER.exec(t)?.index === 0) return true;
  if (INJECTED_TAGS.some((tag) => t.startsWith(`<${tag}>`))) return true;
  const kind = knownWake(t);
  // An inbound channel message is the user speaking; only its prefix is context.
  return kind !== undefined && kind !== INBOUND_KIND;
}
