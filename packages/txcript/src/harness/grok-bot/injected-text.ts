/**
 * Text in a user turn that the user never typed (grok-bot-format.md §4,
 * sendbox decision C5): hidden prompts, tags the host injects, and wakes
 * (scheduled runs, agent-to-agent turns, events, answers to widgets,
 * group-chat turns). Common keeps all of it; list titles skip it, the ledger
 * marks it hidden, and the view shows it folded.
 */
import { stripAddressTag } from './codec.ts';

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
 * A user text split into what the user typed and what the host injected.
 * A hidden-prompt marker hides everything from it to the end (VR-late: "a
 * marker later in the text cuts off what follows"). Blank segments are dropped.
 */
export function splitHiddenText(text: string): TextSegment[] {
  const marker = HIDDEN_MARKER.exec(text);
  const segments =
    marker === null
      ? splitWakes(text)
      : [
          ...splitWakes(text.slice(0, marker.index)),
          {
            hidden: true as const,
            kind: wakeKind(text.slice(marker.index + marker[0].length)) ?? 'hidden prompt',
            text: text.slice(marker.index),
          },
        ];
  // Blank pieces go; a visible piece loses the whitespace that only separated it from a hidden one.
  const kept = segments.filter((seg) => seg.text.trim() !== '');
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
