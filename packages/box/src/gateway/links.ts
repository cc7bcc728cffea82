/**
 * Links the page builds from ledger data, configured on the box: where a `cursor-agent` card
 * opens its agent. `SENDBOX_CURSOR_AGENT_URL` is a template with `{bcId}`; only https (or
 * http on loopback, for a local mirror) is accepted, so a card can never become a script link.
 */
export const DEFAULT_CURSOR_AGENT_URL = 'https://cursor.com/agents?id={bcId}';

export interface PageLinks {
  /** A URL template; `{bcId}` is replaced by the card's URL-encoded agent id. */
  cursorAgent: string;
}

export function pageLinks(env: NodeJS.ProcessEnv = process.env): PageLinks {
  return { cursorAgent: cursorAgentTemplate(env.SENDBOX_CURSOR_AGENT_URL) };
}

function cursorAgentTemplate(value: string | undefined): string {
  const template = value?.trim();
  if (!template) return DEFAULT_CURSOR_AGENT_URL;
  if (!template.includes('{bcId}')) {
    throw new Error(
      `SENDBOX_CURSOR_AGENT_URL=${template} has no {bcId} placeholder; e.g. ${DEFAULT_CURSOR_AGENT_URL}`,
    );
  }
  let url: URL;
  try {
    url = new URL(template.replaceAll('{bcId}', 'x'));
  } catch {
    throw new Error(`SENDBOX_CURSOR_AGENT_URL=${template} is not a URL; e.g. ${DEFAULT_CURSOR_AGENT_URL}`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new Error(`SENDBOX_CURSOR_AGENT_URL=${template} must be an https URL (http only on loopback)`);
  }
  return template;
}
