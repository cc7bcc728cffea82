/**
 * Message ranges, `<id>#<range>`: `#7` one message, `#5-12` inclusive,
 * `#5-` to the end, `#-10` the last ten. Numbers are the 1-based ordinals
 * `view` prints. A range may not cut a tool call from its result: such a
 * range is refused with the nearest ranges that keep every pair whole.
 */
import type { Message } from '../model/common.ts';
import { usageError } from './errors.ts';

export type RangeSpec =
  { kind: 'span'; text: string; from: number; to?: number } | { kind: 'last'; text: string; count: number };

/** A selection of messages: 0-based, `end` exclusive. */
export interface Selection {
  start: number;
  end: number;
}

const RANGE_SYNTAX = /^[0-9-]*$/;

function rangeHelp(text: string): string {
  return `"#${text}" is not a message range`;
}

const RANGE_TODO = 'write #7, #5-12, #5- (5 to the end) or #-10 (the last 10)';

export function parseRange(text: string): RangeSpec {
  const bad = (what = rangeHelp(text)) => usageError({ what, todo: RANGE_TODO });
  let m: RegExpExecArray | null;
  if ((m = /^(\d+)$/.exec(text)) !== null) {
    const n = Number(m[1]);
    return { kind: 'span', text, from: n, to: n };
  }
  if ((m = /^(\d+)-(\d*)$/.exec(text)) !== null) {
    const from = Number(m[1]);
    if (m[2] === '') return { kind: 'span', text, from };
    const to = Number(m[2]);
    if (to < from) throw usageError({ what: `range #${text} runs backwards`, todo: `write #${to}-${from}` });
    return { kind: 'span', text, from, to };
  }
  if ((m = /^-(\d+)$/.exec(text)) !== null) {
    const count = Number(m[1]);
    if (count === 0) throw bad('range #-0 selects no messages');
    return { kind: 'last', text, count };
  }
  throw bad();
}

/**
 * Split `<id>#<range>`. The part after the last `#` is a range only when it
 * is made of digits and dashes, so a title such as `fix #bug` stays whole.
 */
export function splitTarget(arg: string): { id: string; range?: RangeSpec } {
  const at = arg.lastIndexOf('#');
  if (at < 0) return { id: arg };
  const suffix = arg.slice(at + 1);
  if (!RANGE_SYNTAX.test(suffix)) return { id: arg };
  const id = arg.slice(0, at);
  if (id === '')
    throw usageError({ what: `"${arg}" has a range but no session id`, todo: 'write <id>#<range>' });
  if (suffix === '') throw usageError({ what: `"${arg}" ends in "#" with no range`, todo: RANGE_TODO });
  return { id, range: parseRange(suffix) };
}

/** Pairs of (message index of a tool call, message index of its result). */
export function toolPairs(messages: readonly Message[]): Array<[number, number]> {
  const calls = new Map<string, number>();
  messages.forEach((m, i) => {
    for (const b of m.content) if (b.type === 'tool_use' && !calls.has(b.id)) calls.set(b.id, i);
  });
  const pairs: Array<[number, number]> = [];
  messages.forEach((m, i) => {
    for (const b of m.content) {
      if (b.type !== 'tool_result') continue;
      const call = calls.get(b.tool_use_id);
      if (call !== undefined && call !== i) pairs.push([call, i]);
    }
  });
  return pairs;
}

function crossing(pairs: ReadonlyArray<[number, number]>, s: Selection): Array<[number, number]> {
  const inside = (i: number) => i >= s.start && i < s.end;
  return pairs.filter(([a, b]) => inside(a) !== inside(b));
}

/** The smallest selection containing `s` that cuts no pair. */
export function widen(pairs: ReadonlyArray<[number, number]>, s: Selection): Selection {
  let { start, end } = s;
  for (;;) {
    const cut = crossing(pairs, { start, end });
    if (cut.length === 0) return { start, end };
    for (const [a, b] of cut) {
      start = Math.min(start, a, b);
      end = Math.max(end, a + 1, b + 1);
    }
  }
}

/** The largest selection inside `s` that cuts no pair, or undefined when none is left. */
export function narrow(pairs: ReadonlyArray<[number, number]>, s: Selection): Selection | undefined {
  let { start, end } = s;
  while (start < end) {
    const cut = crossing(pairs, { start, end });
    if (cut.length === 0) return { start, end };
    for (const [a, b] of cut) {
      for (const [inner, outer] of [
        [a, b],
        [b, a],
      ] as const) {
        if (inner < start || inner >= end) continue;
        if (outer < start) start = Math.max(start, inner + 1);
        else end = Math.min(end, inner);
      }
    }
  }
  return undefined;
}

/** A selection as the user writes it: `#4`, `#4-9`. */
export function formatSelection(s: Selection): string {
  return s.end - s.start === 1 ? `#${s.start + 1}` : `#${s.start + 1}-${s.end}`;
}

/** The messages a range picks out of a session with `count` messages, checked against tool pairs. */
export function selectRange(spec: RangeSpec | undefined, messages: readonly Message[]): Selection {
  const count = messages.length;
  if (spec === undefined) return { start: 0, end: count };
  const has =
    count === 1 ? '1 message (#1)' : count === 0 ? 'no messages' : `${count} messages (#1-${count})`;
  let selection: Selection;
  if (spec.kind === 'last') {
    selection = { start: Math.max(0, count - spec.count), end: count };
    if (count === 0)
      throw usageError({ what: `range #${spec.text} selects nothing: the session has no messages` });
  } else {
    if (spec.from < 1) {
      throw usageError({ what: `range #${spec.text} starts at 0`, todo: 'messages are numbered from 1' });
    }
    const to = spec.to ?? count;
    if (spec.from > count || to > count) {
      throw usageError({
        what: `range #${spec.text} is past the end: the session has ${has}`,
        todo: count === 0 ? 'view the session without a range' : `pick numbers from 1 to ${count}`,
      });
    }
    selection = { start: spec.from - 1, end: to };
  }
  const pairs = toolPairs(messages);
  const cut = crossing(pairs, selection);
  const first = cut[0];
  if (first === undefined) return selection;
  const wider = widen(pairs, selection);
  const narrower = narrow(pairs, selection);
  const options = [narrower, wider]
    .filter((s): s is Selection => s !== undefined)
    .map((s) => `${formatSelection(s)} (${s === wider ? 'wider' : 'narrower'})`);
  const [call, result] = first;
  throw usageError({
    what: `range #${spec.text} separates the tool call in #${call + 1} from its result in #${result + 1}`,
    todo: `use ${options.join(' or ')} to keep tool calls with their results`,
  });
}
