/**
 * The entries a `forget` most likely meant when its text matches none exactly: the ones that
 * contain it or are contained in it (case and spacing aside), then those sharing most words.
 */
const MAX_NEAR = 5;
/** Shared words (Dice's coefficient over lower-case words) below which an entry is not "near". */
const MIN_WORD_OVERLAP = 0.3;

function normalized(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

function words(text: string): Set<string> {
  return new Set(normalized(text).match(/[\p{L}\p{N}]+/gu) ?? []);
}

function score(wanted: string, candidate: string): number {
  const a = normalized(wanted);
  const b = normalized(candidate);
  if (a === b) return 3;
  if (a !== '' && (b.includes(a) || a.includes(b))) return 2;
  const wa = words(a);
  const wb = words(b);
  if (wa.size === 0 || wb.size === 0) return 0;
  let shared = 0;
  for (const word of wa) if (wb.has(word)) shared++;
  return (2 * shared) / (wa.size + wb.size);
}

/** At most five entries near `wanted`, nearest first (ties keep the entries' order). */
export function nearMatches(wanted: string, candidates: readonly string[]): string[] {
  return candidates
    .map((text, index) => ({ text, index, score: score(wanted, text) }))
    .filter((candidate) => candidate.score >= MIN_WORD_OVERLAP)
    .sort((x, y) => y.score - x.score || x.index - y.index)
    .slice(0, MAX_NEAR)
    .map((candidate) => candidate.text);
}
