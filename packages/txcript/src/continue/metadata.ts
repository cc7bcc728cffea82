/**
 * `--metadata` for `txcript continue`: each value is `key=value` or a JSON
 * object; they merge left to right (a later key wins). Harnesses read the keys
 * they know and ignore the rest, so new keys stay forward-compatible.
 */
import type { JsonObject, JsonValue } from '../model/common.ts';

export class MetadataError extends Error {
  override name = 'MetadataError';
}

export function parseMetadata(args: readonly string[]): JsonObject {
  // A Map, not an object: a key such as `__proto__` must stay a plain key.
  const merged = new Map<string, JsonValue>();
  args.forEach((arg, index) => {
    const where = `--metadata #${index + 1}`;
    const trimmed = arg.trim();
    if (trimmed.startsWith('{')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(trimmed);
      } catch (error) {
        throw new MetadataError(
          `${where} looks like JSON but does not parse (${(error as Error).message}); pass a JSON object such as '{"name":"Relay bot"}' or key=value`,
        );
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new MetadataError(`${where} must be a JSON object or key=value`);
      }
      for (const [key, value] of Object.entries(parsed as JsonObject)) merged.set(key, value);
      return;
    }
    const eq = arg.indexOf('=');
    if (eq < 0 || arg.slice(0, eq).trim() === '') {
      throw new MetadataError(
        `${where} is "${arg}": expected key=value (e.g. name='Relay bot') or a JSON object`,
      );
    }
    merged.set(arg.slice(0, eq).trim(), arg.slice(eq + 1));
  });
  return Object.fromEntries(merged);
}

/** A string metadata value, or undefined when absent, empty or not a string. */
export function metadataString(metadata: JsonObject, key: string): string | undefined {
  const value: JsonValue | undefined = Object.hasOwn(metadata, key) ? metadata[key] : undefined;
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
