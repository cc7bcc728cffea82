/**
 * `txcript mcp`: a stdio MCP server through which agents read past sessions.
 * Read-only tools `list_sessions`, `search_sessions` and `read_session`, and
 * each session as a resource `txcript://session/<harness>/<id>` (docs/mcp.md).
 *
 * Stdout is the protocol: everything else (warnings, notes) goes to stderr.
 * A failing call is an MCP tool error whose text says what, where and what to
 * do, the same words the command line uses; the server keeps running.
 */
import type { Readable, Writable } from 'node:stream';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { colorsFor } from '../cli/colors.ts';
import type { CliContext } from '../cli/context.ts';
import { CliError, formatError, oneLine, usageError } from '../cli/errors.ts';
import { formatHits } from '../cli/search.ts';
import { parseRange } from '../cli/range.ts';
import { openSession } from '../cli/show.ts';
import { renderView } from '../cli/view.ts';
import { parseWhen } from '../cli/when.ts';
import {
  type IndexedSession,
  type SessionBounds,
  SessionIndex,
  filtersFor,
  recentSessions,
} from '../search/engine.ts';
import { findHits } from '../search/hits.ts';
import { parseQuery } from '../search/query.ts';
import { resolve } from 'node:path';

/** A call refreshes the index when the last refresh is older than this: agents call in bursts. */
export const REFRESH_MS = 5_000;
/** Characters of `read_session` text per page. */
export const PAGE_CHARS = 20_000;
const MAX_LIMIT = 500;

const plain = colorsFor({ NO_COLOR: '1' }, false);
/** Progress notifications of a refresh go out at most this often (the last, all sources read, always). */
export const PROGRESS_MS = 250;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Run `work`, telling a client that asked for progress (a `progressToken`) how
 * far a refresh of the index it waits for has come: a first index takes long
 * enough for a client's request timeout, which progress can reset.
 */
export async function withProgress<T>(
  index: Pick<SessionIndex, 'watch'>,
  extra: Pick<Extra, '_meta' | 'sendNotification'>,
  work: () => Promise<T>,
): Promise<T> {
  const token = extra._meta?.progressToken;
  if (token === undefined) return work();
  // Progress must grow from one notification to the next: a second refresh (one that this call
  // waits for after another, or a rebuild) counts on from where the first ended.
  let base = 0;
  let last = 0;
  let sentAt = -Infinity;
  const unwatch = index.watch((done, total) => {
    if (done <= last) base += last;
    last = done;
    const now = Date.now();
    if (done < total && now - sentAt < PROGRESS_MS) return;
    sentAt = now;
    extra
      .sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: base + done,
          total: base + total,
          message: `indexing sessions ${done}/${total}`,
        },
      })
      .catch(() => undefined); // the client went away: the call's own answer fails too
  });
  try {
    return await work();
  } finally {
    unwatch();
  }
}

function toolError(err: unknown): CallToolResult {
  const text =
    err instanceof CliError
      ? formatError({ what: err.message, where: err.where, todo: err.todo, details: err.details })
      : formatError({ what: oneLine(err instanceof Error ? err.message : String(err)) });
  return { isError: true, content: [{ type: 'text', text: text.trimEnd() }] };
}

async function answer(work: () => Promise<string>): Promise<CallToolResult> {
  try {
    return { content: [{ type: 'text', text: await work() }] };
  } catch (err) {
    return toolError(err);
  }
}

function sessionLine(s: IndexedSession): string {
  const facts = [
    s.id,
    s.harness,
    s.messageCount === null ? undefined : `${s.messageCount} messages`,
    s.lastActivity ?? undefined,
    s.cwd ?? undefined,
    s.parentId === null ? undefined : `subagent of ${s.parentId}`,
    JSON.stringify(s.title ?? '(untitled)'),
  ];
  return facts.filter((f) => f !== undefined).join('  ');
}

/** Pages of `text`, cut at line ends where one is near. */
export function pageOf(text: string, page: number): { text: string; pages: number } {
  const pages: string[] = [];
  let at = 0;
  while (at < text.length) {
    let end = Math.min(text.length, at + PAGE_CHARS);
    if (end < text.length) {
      const nl = text.lastIndexOf('\n', end);
      if (nl > at + PAGE_CHARS / 2) end = nl + 1;
    }
    pages.push(text.slice(at, end));
    at = end;
  }
  if (pages.length === 0) pages.push('');
  if (page > pages.length) {
    throw usageError({
      what: `page ${page} is past the end: the session has ${pages.length} pages`,
      todo: `ask for page 1 to ${pages.length}`,
    });
  }
  return { text: pages[page - 1]!, pages: pages.length };
}

const harness = z
  .string()
  .min(1)
  .optional()
  .describe('only this harness: grok_bot, claude_code, codex (aliases work)');
const cwd = z
  .string()
  .min(1)
  .optional()
  .describe('only sessions whose working folder is this absolute folder or under it');

export function createMcpServer(ctx: CliContext): { server: McpServer; index: SessionIndex } {
  const index = new SessionIndex(ctx);
  const server = new McpServer({ name: 'txcript', version: '0.1.0' });
  const readOnly = { readOnlyHint: true, openWorldHint: false };

  const sessionsOf = async (from: string | undefined, bounds: SessionBounds): Promise<IndexedSession[]> => {
    const { harnesses } = await filtersFor(ctx, from, { limit: 0 });
    return index.use(undefined, (i) => recentSessions(i.sessions(harnesses), bounds), REFRESH_MS);
  };

  server.registerTool(
    'list_sessions',
    {
      title: 'List sessions',
      description:
        'Past agent sessions on this machine (Grok Bot, Claude Code, Codex), most recent first: id, harness, message count, last activity, working folder, title.',
      inputSchema: {
        from: harness,
        cwd,
        since: z
          .string()
          .min(1)
          .optional()
          .describe('only sessions active at or after: RFC 3339, YYYY-MM-DD, or an age like 2h, 3d'),
        limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe('at most this many (default 50)'),
      },
      annotations: readOnly,
    },
    (args, extra) =>
      answer(async () => {
        const rows = await withProgress(index, extra, () =>
          sessionsOf(args.from, {
            ...(args.since !== undefined
              ? { sinceMs: parseWhen(args.since, '--since', ctx.io.now()).getTime() }
              : {}),
            ...(args.cwd !== undefined ? { cwd: resolve(args.cwd) } : {}),
            limit: args.limit ?? 50,
          }),
        );
        return rows.length === 0 ? 'No sessions match.' : rows.map(sessionLine).join('\n');
      }),
  );

  server.registerTool(
    'search_sessions',
    {
      title: 'Search sessions',
      description:
        'Full-text search of past sessions. Query: words (all must match), "exact phrase", -exclude, typo~. Each hit gives a reference (id#N or id#N-M) to pass to read_session, the kind of text matched, and a snippet with matches in [brackets].',
      inputSchema: {
        query: z.string().min(1).describe('e.g. pagination "off by one" -staging'),
        from: harness,
        cwd,
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_LIMIT)
          .optional()
          .describe('at most this many hits (default 20)'),
      },
      annotations: readOnly,
    },
    (args, extra) =>
      answer(async () => {
        const query = parseQuery(args.query);
        const filters = await filtersFor(ctx, args.from, {
          limit: args.limit ?? 20,
          ...(args.cwd !== undefined ? { cwd: resolve(args.cwd) } : {}),
        });
        const hits = await withProgress(index, extra, () =>
          index.use(undefined, (i) => findHits(i, query, filters), REFRESH_MS),
        );
        return hits.length === 0
          ? `Nothing matches ${JSON.stringify(args.query)}.`
          : formatHits(hits, plain).trimEnd();
      }),
  );

  server.registerTool(
    'read_session',
    {
      title: 'Read a session',
      description: `A session as compact text (what \`txcript view\` prints), ${PAGE_CHARS} characters a page. Messages are numbered #N; a range picks some of them.`,
      inputSchema: {
        id: z
          .string()
          .min(1)
          .describe('session id, title or unambiguous id prefix; a search reference id#N-M works too'),
        range: z
          .string()
          .min(1)
          .optional()
          .describe('messages to read: 7, 5-12, 5- (to the end) or -10 (the last 10)'),
        from: harness,
        page: z.number().int().min(1).optional().describe('page of the text (default 1)'),
      },
      annotations: readOnly,
    },
    (args) =>
      answer(async () => {
        if (args.range !== undefined && /#[0-9-]*$/.test(args.id)) {
          throw usageError({
            what: `"${args.id}" has a range already`,
            todo: 'give the range in id or in range, not both',
          });
        }
        const range = args.range?.replace(/^#/, '');
        // Checked as a range first: joined to the id, a text that is not one reads as part of a title.
        if (range !== undefined) parseRange(range);
        const target = range === undefined ? args.id : `${args.id}#${range}`;
        const { found, transcript, selection } = await openSession(ctx, target, args.from);
        const text = renderView(transcript, { harness: found.harness.id, colors: plain, selection });
        const page = args.page ?? 1;
        const paged = pageOf(text, page);
        if (paged.pages === 1) return paged.text;
        const more = page < paged.pages ? `; call read_session again with page: ${page + 1}` : '';
        return `${paged.text}\n[page ${page} of ${paged.pages}${more}]`;
      }),
  );

  server.registerResource(
    'session',
    new ResourceTemplate('txcript://session/{harness}/{id}', {
      list: async () => ({
        resources: (await sessionsOf(undefined, { limit: MAX_LIMIT })).map((s) => ({
          uri: sessionUri(s.harness, s.id),
          name: s.title ?? s.id,
          description: `${s.harness} session ${s.id}${s.lastActivity === null ? '' : `, last active ${s.lastActivity}`}`,
          mimeType: 'text/plain',
        })),
      }),
    }),
    {
      title: 'Agent session',
      description: 'A past session as compact text (txcript view)',
      mimeType: 'text/plain',
    },
    async (uri, variables) => {
      const one = (v: string | string[] | undefined) =>
        decodeURIComponent(Array.isArray(v) ? (v[0] ?? '') : (v ?? ''));
      const { found, transcript, selection } = await openSession(
        ctx,
        one(variables.id),
        one(variables.harness),
      );
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: 'text/plain',
            text: renderView(transcript, { harness: found.harness.id, colors: plain, selection }),
          },
        ],
      };
    },
  );

  return { server, index };
}

export function sessionUri(harnessId: string, id: string): string {
  return `txcript://session/${encodeURIComponent(harnessId)}/${encodeURIComponent(id)}`;
}

/** Serve MCP on `input`/`output` until the client closes its end. */
export async function serveMcp(
  ctx: CliContext,
  input: Readable = process.stdin,
  output: Writable = process.stdout,
): Promise<void> {
  const { server, index } = createMcpServer(ctx);
  const transport = new StdioServerTransport(input, output);
  const closed = new Promise<void>((done) => {
    transport.onclose = () => done();
    input.once('end', () => done());
    input.once('close', () => done());
  });
  await server.connect(transport);
  // Index while the client starts up, so that its first call rarely waits for a first index.
  index.warm();
  await closed;
  await server.close();
  await index.stop();
}
