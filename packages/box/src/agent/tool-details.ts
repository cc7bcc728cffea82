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
 * A result envelope (`{success: {stdout, exitCode}}`…) as text a person reads: its fields one
 * after another, strings as they are (stdout keeps its line breaks), the rest as JSON.
 */
function readable(result: unknown): string {
  result = withoutImageData(result);
  const entries = isRecord(result) ? Object.entries(result) : [];
  const [only] = entries;
  if (entries.length !== 1 || !only || !isRecord(only[1])) return JSON.stringify(result, null, 2);
  const lines: string[] = [only[0]];
  for (const [key, value] of Object.entries(only[1])) {
    if (typeof value === 'string')
      lines.push(value.includes('\n') ? `${key}:\n${value.replace(/\n$/, '')}` : `${key}: ${value}`);
    else lines.push(`${key}: ${JSON.stringify(value)}`);
  }
  return lines.join('\n');
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
