/**
 * The `regex` of an `await` call, compiled for V8's linear-time engine: the
 * model writes the pattern and the host runs it over output the agent's
 * command controls, so a backtracking pattern (`(a+)+$`) must not be able to
 * hold the event loop. Patterns the linear engine cannot run (back-references,
 * lookaround) are refused with a message the model can act on.
 */
import { setFlagsFromString } from 'node:v8';

/** Longest pattern accepted (a pattern is a wait condition, not a program). */
export const MAX_PATTERN_LENGTH = 1000;

let engineEnabled = false;

/** The compiled pattern, or a model-readable reason it cannot be used. */
export function outputPattern(source: string): RegExp | { refused: string } {
  if (source.length > MAX_PATTERN_LENGTH) {
    return {
      refused: `regex is ${source.length} characters long; at most ${MAX_PATTERN_LENGTH} are accepted.`,
    };
  }
  if (!engineEnabled) {
    // Only patterns compiled with the `l` flag use this engine; every other RegExp is unchanged.
    setFlagsFromString('--enable-experimental-regexp-engine');
    engineEnabled = true;
  }
  try {
    // eslint-disable-next-line no-invalid-regexp -- `l` (linear engine) exists once the flag above is set
    return new RegExp(source, 'lm');
  } catch (error) {
    const why = (error as Error).message;
    const linear = /linear time/i.test(why);
    return {
      refused: linear
        ? `regex ${JSON.stringify(source)} uses a feature that cannot run in linear time (a back-reference or ` +
          'lookaround). Use a plain pattern: literals, character classes, alternation and quantifiers.'
        : `regex ${JSON.stringify(source)} is not a valid JavaScript regular expression: ${why}.`,
    };
  }
}
