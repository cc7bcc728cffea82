/**
 * What a `tool-call` ledger entry carries beyond Grok Bot's `name`/`status`/`summary` (a
 * sendbox extension; readers ignore unknown keys): the model's own `description` of the call,
 * its input and its result as the model read them, both scrubbed of secrets and capped, and
 * how long it ran. The web UI's tool row opens to these.
 */
import type { Scrubber } from '../secrets/scrub.ts';

export const TOOL_INPUT_CAP = 4_000;
export const TOOL_OUTPUT_CAP = 8_000;

export interface ToolCallDetails {
  description?: string;
  input: string;
  output: string;
  durationMs: number;
}

export function toolCallDetails(
  input: Record<string, unknown>,
  result: unknown,
  durationMs: number,
  scrubber: Scrubber,
): ToolCallDetails {
  const description = typeof input.description === 'string' ? input.description.trim() : '';
  return {
    ...(description ? { description: capped(scrubber.text(description), 300) } : {}),
    input: capped(scrubber.text(JSON.stringify(input, null, 2)), TOOL_INPUT_CAP),
    output: capped(scrubber.text(readable(result)), TOOL_OUTPUT_CAP),
    durationMs: Math.max(0, Math.round(durationMs)),
  };
}

/**
 * A result envelope (`{success: {stdout, exitCode}, isBackground: false}`…) as text a person
 * reads: the outcome's name, then its fields one after another, strings as they are (stdout
 * and stderr keep their line breaks), the rest as JSON. Flags beside the outcome are named only
 * when set (`isBackground: true`); empty strings are left out. A failure's `interleavedOutput` repeats stdout and stderr, and
 * `localExecutionTimeMs` repeats `executionTime`: both are left out when they do.
 */
function readable(result: unknown): string {
  result = withoutImageData(result);
  if (!isRecord(result)) return JSON.stringify(result, null, 2);
  const outcomes = Object.entries(result).filter((entry): entry is [string, Record<string, unknown>] =>
    isRecord(entry[1]),
  );
  const [only] = outcomes;
  if (outcomes.length !== 1 || !only) return JSON.stringify(result, null, 2);
  const [outcome, fields] = only;
  const flags = Object.entries(result).filter(([key, value]) => key !== outcome && value !== false);
  const lines: string[] = [outcome];
  for (const [key, value] of [...Object.entries(fields), ...flags]) {
    if (value === '' || repeats(key, value, fields)) continue;
    if (typeof value === 'string')
      lines.push(value.includes('\n') ? `${key}:\n${value.replace(/\n$/, '')}` : `${key}: ${value}`);
    else lines.push(`${key}: ${JSON.stringify(value)}`);
  }
  return lines.join('\n');
}

/** A field whose value the envelope already shows under another name. */
function repeats(key: string, value: unknown, fields: Record<string, unknown>): boolean {
  if (key === 'localExecutionTimeMs') return value === fields.executionTime;
  if (key === 'interleavedOutput')
    return typeof fields.stdout === 'string' && typeof fields.stderr === 'string';
  return false;
}

/** A read image's base64 (`success.imageData`) is bytes, not something to read: its size stands in. */
function withoutImageData(result: unknown): unknown {
  if (!isRecord(result) || !isRecord(result.success) || typeof result.success.imageData !== 'string')
    return result;
  const kb = Math.round((result.success.imageData.length * 3) / 4 / 1024);
  return { ...result, success: { ...result.success, imageData: `(image, ${kb} KB, shown to the model)` } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function capped(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… (${(text.length - max).toLocaleString('en')} more characters)`;
}
