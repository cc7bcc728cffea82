/**
 * Which tool calls ask the user first. A call is named for the rules by its tool (`web_fetch`), or
 * for an MCP call `mcp:<server>/<tool>`. A profile's `approvals` maps names or patterns (`*` any
 * run of characters: `mcp:github/*`) to `"ask"` or `"auto"`; the most specific rule wins (an exact
 * name, then the longest pattern). Without a rule, an MCP call follows its server's mcp.json
 * `approval`, and any other tool runs.
 */
import type { ApprovalMode } from '../mcp/config.ts';

export type { ApprovalMode };

/** What a call is called in approval rules. */
export function approvalSubject(toolName: string, input: unknown): string {
  if (toolName === 'mcp' && typeof input === 'object' && input !== null) {
    const { server, toolName: tool } = input as { server?: unknown; toolName?: unknown };
    if (typeof server === 'string' && typeof tool === 'string') return `mcp:${server}/${tool}`;
  }
  return toolName;
}

/** The profile's rule for a subject, or undefined when none matches. */
export function ruleFor(
  rules: Readonly<Record<string, ApprovalMode>> | undefined,
  subject: string,
): ApprovalMode | undefined {
  if (!rules) return undefined;
  const exact = rules[subject];
  if (exact) return exact;
  let best: { length: number; mode: ApprovalMode } | undefined;
  for (const [pattern, mode] of Object.entries(rules)) {
    if (!pattern.includes('*') || !globMatches(pattern, subject)) continue;
    if (!best || pattern.length > best.length) best = { length: pattern.length, mode };
  }
  return best?.mode;
}

function globMatches(pattern: string, subject: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(subject);
}
