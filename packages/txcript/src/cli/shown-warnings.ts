/**
 * Warnings a user has already been shown today. A file txcript cannot read stays unreadable from
 * one run to the next; saying so on every `list` and `search` buries what is new. Each warning
 * (its file and message) is shown once per day, remembered in the cache folder; `--quiet` shows
 * none. Nothing is remembered when the environment names no home (tests' in-process runs) or
 * caching is off (TXCRIPT_NO_CACHE), and a memory that cannot be read or written only means a
 * warning is shown again.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic.ts';
import { envValue } from '../harness/env.ts';
import { summaryCacheDir, summaryCacheDisabled } from '../harness/summary-cache-file.ts';
import type { Warning } from '../harness/types.ts';
import { isJsonObject } from '../model/json.ts';

/** How long a warning shown stays unshown. */
export const SHOW_AGAIN_AFTER_MS = 24 * 60 * 60 * 1000;
const FORMAT = 'txcript shown warnings';
const VERSION = 1;

export interface ShownWarnings {
  /** True when `warning` is to be shown now (and it is then remembered as shown). */
  show(warning: Warning): boolean;
  /** Writes what was shown this run; a failure is ignored. */
  save(): Promise<void>;
}

function keyOf(w: Warning): string {
  return createHash('sha256').update(`${w.source}\n${w.message}`).digest('hex').slice(0, 24);
}

/** Shows everything, remembers nothing. */
const alwaysShown: ShownWarnings = { show: () => true, save: () => Promise.resolve() };

export function shownWarnings(env: NodeJS.ProcessEnv, now: () => Date): ShownWarnings {
  const hasHome = envValue(env, 'HOME') !== undefined || envValue(env, 'XDG_CACHE_HOME') !== undefined;
  if (!hasHome || summaryCacheDisabled(env)) return alwaysShown;
  const dir = summaryCacheDir(env);
  const file = join(dir, `shown-warnings-v${VERSION}.json`);
  let shown: Map<string, number> | undefined;
  let changed = false;
  const load = (): Map<string, number> => {
    if (shown !== undefined) return shown;
    shown = new Map();
    try {
      const doc: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (isJsonObject(doc) && doc.format === FORMAT && isJsonObject(doc.shown))
        for (const [k, v] of Object.entries(doc.shown)) if (typeof v === 'number') shown.set(k, v);
    } catch {
      // Missing or damaged: every warning is new.
    }
    return shown;
  };
  return {
    show(warning) {
      const memory = load();
      const key = keyOf(warning);
      const at = now().getTime();
      const last = memory.get(key);
      if (last !== undefined && at - last < SHOW_AGAIN_AFTER_MS && at >= last) return false;
      memory.set(key, at);
      changed = true;
      return true;
    },
    async save() {
      if (!changed || shown === undefined) return;
      const at = now().getTime();
      const kept = Object.fromEntries([...shown].filter(([, t]) => at - t < SHOW_AGAIN_AFTER_MS));
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        await writeFileAtomic(
          file,
          `${JSON.stringify({ format: FORMAT, version: VERSION, shown: kept })}\n`,
          {
            mode: 0o600,
            durable: false,
          },
        );
      } catch {
        // Not remembered: shown again next time.
      }
    },
  };
}
