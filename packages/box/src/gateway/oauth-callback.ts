/**
 * `GET /oauth/mcp/callback?code&state` (docs/gateway.md): where an MCP server's authorization
 * server sends the user back. It trades the code for tokens (kept encrypted, never shown) and
 * answers with a small page that says what happened; the conversation gets a "Connected" notice.
 */
import type { Context } from 'hono';
import type { AgentHost } from '../host/types.ts';

export async function oauthCallback(c: Context, host: AgentHost): Promise<Response> {
  c.header('Cache-Control', 'no-store');
  const state = c.req.query('state') ?? '';
  const code = c.req.query('code') ?? '';
  const refused = c.req.query('error');
  if (refused !== undefined) {
    const why = c.req.query('error_description') ?? refused;
    return page(c, 400, 'Not connected', `The server's sign-in ended without access: ${why}.`);
  }
  if (state === '' || code === '') {
    return page(c, 400, 'Not connected', 'This address needs the code and state the sign-in page adds.');
  }
  try {
    const { server } = await host.finishMcpConnect({ state, code });
    return page(
      c,
      200,
      `Connected ${server}`,
      `Your agents can use ${server} now. Close this tab and go back to the conversation.`,
    );
  } catch (error) {
    return page(c, 400, 'Not connected', (error as Error).message);
  }
}

function page(c: Context, status: 200 | 400, title: string, text: string): Response {
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)} · sendbox</title>` +
    '<meta name="viewport" content="width=device-width, initial-scale=1"></head>' +
    `<body><main><h1>${escape(title)}</h1><p>${escape(text)}</p><p><a href="/">Back to sendbox</a></p></main></body></html>`;
  c.header('Content-Security-Policy', "default-src 'none'");
  return c.html(html, status);
}

function escape(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch,
  );
}
