/** `agents/<id>/profile.json` (grok-bot-format.md §8): read with Zod (it may come from another host), written atomically. */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { writeFileAtomic } from '../../fs/atomic.ts';
import { backgroundSettingsSchema } from '../../tasks/limits.ts';

export const profileSchema = z.looseObject({
  name: z.string(),
  description: z.string().default(''),
  harness: z.string().default('box'),
  title: z.string().default(''),
  /** sendbox: epoch ms. */
  createdAt: z.number().optional(),
  updatedAt: z.number().optional(),
  /** sendbox: what the user (or the agent itself, `update_state profile`) told it to do; joins the system prompt. */
  instructions: z.string().optional(),
  /**
   * sendbox: a model id of the configured provider for this agent alone (`updateAgent`), and the
   * provider it was picked for: it applies only while that provider is the configured one.
   */
  model: z.string().min(1).optional(),
  modelProvider: z.string().optional(),
  /** sendbox: true for an agent that cannot be prompted (the no-model demo). */
  readOnly: z.boolean().optional(),
  /** sendbox: the tool sandbox's policy for this agent (docs/sandbox.md). */
  sandbox: z
    .looseObject({
      /** Hosts its commands may reach through the egress proxy; `example.com` includes subdomains. */
      allowDomains: z.array(z.string().min(1)).default([]),
    })
    .optional(),
  /** sendbox: limits on background commands and subagents, and on a turn's model steps (tasks/limits.ts). */
  background: backgroundSettingsSchema.optional(),
  /** sendbox: the web tools for this agent; `fetch: "off"` withholds `web_fetch` (docs/runtime.md). */
  web: z
    .looseObject({
      fetch: z.enum(['on', 'off'], { message: 'web.fetch is "on" or "off"' }).default('on'),
    })
    .optional(),
  /** sendbox: the MCP servers of mcp.json this agent may use (absent: all of them). */
  mcp: z
    .looseObject({
      servers: z.array(z.string().min(1)).optional(),
    })
    .optional(),
  /**
   * sendbox: tools that ask the user before they run: `{"web_fetch": "ask", "mcp:github/*": "ask"}`
   * (approvals/policy.ts).
   */
  approvals: z
    .record(z.string().min(1), z.enum(['auto', 'ask'], { message: 'an approval is "auto" or "ask"' }))
    .optional(),
});

export type Profile = z.output<typeof profileSchema>;

export async function readProfile(file: string): Promise<Profile> {
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`${file}: cannot read the agent profile: ${(error as Error).message}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    throw new Error(`${file}: the agent profile is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const parsed = profileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${file}: invalid agent profile at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? ''}`,
    );
  }
  return parsed.data;
}

export async function writeProfile(file: string, profile: Profile): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o600 });
}
