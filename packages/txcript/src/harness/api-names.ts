/**
 * Both target APIs restrict tool names and call ids to `[A-Za-z0-9_-]`
 * (Anthropic tool_use ids and names, OpenAI function names). Names and ids
 * that come from another harness are made to fit when written; ones that
 * already fit, as every native one does, are left alone.
 */
const UNSAFE = /[^A-Za-z0-9_-]/g;

export function apiSafeName(name: string): string {
  const safe = name.replace(UNSAFE, '_').slice(0, 64);
  return safe === '' ? 'tool' : safe;
}

export function apiSafeId(id: string): string {
  const safe = id.replace(UNSAFE, '_');
  return safe === '' ? 'call' : safe;
}
