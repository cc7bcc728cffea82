/**
 * Resume commands: the argv that reopens a session in its own tool. An env
 * var may replace the default with a template such as `mytool --open {id}`;
 * the template is split into argv here (quotes and backslashes as in a POSIX
 * shell, but no expansion of any kind) and is never run through a shell.
 */
import { assertSafeSessionId } from './session-id.ts';

/** Split a command template into words: '…' literal, "…" with \" and \\ escapes, \x outside quotes. */
export function splitCommandTemplate(template: string, origin: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  while (i < template.length) {
    const c = template[i]!;
    if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
    } else if (c === "'") {
      const end = template.indexOf("'", i + 1);
      if (end === -1) throw new Error(`${origin}: unterminated ' quote in ${JSON.stringify(template)}`);
      word += template.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      for (;;) {
        if (i >= template.length) {
          throw new Error(`${origin}: unterminated " quote in ${JSON.stringify(template)}`);
        }
        const d = template[i]!;
        if (d === '"') break;
        if (d === '\\' && (template[i + 1] === '"' || template[i + 1] === '\\')) {
          word += template[i + 1];
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
      inWord = true;
      i++;
    } else if (c === '\\') {
      if (i + 1 >= template.length)
        throw new Error(`${origin}: trailing backslash in ${JSON.stringify(template)}`);
      word += template[i + 1];
      inWord = true;
      i += 2;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) throw new Error(`${origin}: the resume command template is empty`);
  return words;
}

/**
 * The argv to resume `id`: the template in `env[envVar]` when set (every
 * `{id}` replaced inside its word, so an id can never split or add words;
 * with no `{id}` the id is appended), else `defaultArgv`.
 */
export function resumeArgv(
  id: string,
  env: NodeJS.ProcessEnv,
  envVar: string,
  defaultArgv: readonly string[],
  harness: string,
): string[] {
  assertSafeSessionId(id, harness);
  const template = env[envVar];
  if (template === undefined || template.trim() === '') return [...defaultArgv, id];
  const words = splitCommandTemplate(template, envVar);
  if (!words.some((w) => w.includes('{id}'))) return [...words, id];
  return words.map((w) => w.split('{id}').join(id));
}
