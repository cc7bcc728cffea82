// Real MCP servers over HTTP on loopback for the box's tests, built with the SDK's server pieces.
// Plain JavaScript run by node (the SDK's auth router is Express, whose types are not installed).
//   node http-server.mjs streamable   Streamable HTTP at /mcp; with REQUIRED_BEARER set, only
//                                     `Authorization: Bearer <it>` is let in (else 401)
//   node http-server.mjs sse          the older HTTP+SSE transport only, at /sse (POST there: 405)
//   node http-server.mjs oauth        Streamable HTTP at /mcp behind OAuth: an authorization
//                                     server on its own port (SDK mcpAuthRouter: metadata,
//                                     dynamic registration, authorize with PKCE, token, refresh),
//                                     protected-resource metadata and bearer checks on /mcp
// Prints one JSON line: {"url": <the MCP URL>, "control": <test control URL, oauth only>}.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
  mcpAuthRouter,
  createOAuthMetadata,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { DemoInMemoryClientsStore } from '@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js';
import { z } from 'zod';

const mode = process.argv[2];

function mcpServer(label) {
  const server = new McpServer(
    { name: `http-test-${label}`, version: '1.0.0' },
    { instructions: `A ${label} test server.` },
  );
  server.registerTool(
    'echo',
    { description: 'Echoes text back.', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text: `${label} echo: ${text}` }] }),
  );
  return server;
}

/** Stateless Streamable HTTP: a server and transport per request (the SDK's stateless pattern). */
async function streamable(req, res, body) {
  if (req.method !== 'POST') {
    res.writeHead(405, { Allow: 'POST' }).end();
    return;
  }
  const server = mcpServer(mode);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

function readJson(req) {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => resolve(text ? JSON.parse(text) : undefined));
  });
}

function listen(handler) {
  return new Promise((resolve) => {
    const server = http.createServer(handler);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`));
  });
}

if (mode === 'streamable') {
  const required = process.env.REQUIRED_BEARER;
  const base = await listen(async (req, res) => {
    if (required && req.headers.authorization !== `Bearer ${required}`) {
      // Echoes what it got, as careless servers do: the box must keep it from the model.
      const received = req.headers.authorization ?? '';
      res
        .writeHead(401, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ error: 'unauthorized', received }));
      return;
    }
    await streamable(req, res, await readJson(req));
  });
  console.log(JSON.stringify({ url: `${base}/mcp` }));
} else if (mode === 'sse') {
  const sessions = new Map();
  const base = await listen(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      sessions.set(transport.sessionId, transport);
      res.on('close', () => sessions.delete(transport.sessionId));
      await mcpServer(mode).connect(transport);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const transport = sessions.get(url.searchParams.get('sessionId'));
      if (!transport) return void res.writeHead(404).end('no such session');
      await transport.handlePostMessage(req, res);
      return;
    }
    res.writeHead(405, { Allow: 'GET' }).end('this server speaks the HTTP+SSE transport only');
  });
  console.log(JSON.stringify({ url: `${base}/sse` }));
} else if (mode === 'oauth') {
  // An authorization server provider: codes bound to their PKCE challenge, short-lived access
  // tokens with refresh tokens; every token it issued is listed at the control URL (tests grep for them).
  const codes = new Map();
  const access = new Map();
  const refresh = new Map();
  const issued = { access: [], refresh: [], refreshed: 0 };
  const issue = (clientId, scopes, resource) => {
    const token = `at-${randomUUID()}`;
    const refreshToken = `rt-${randomUUID()}`;
    access.set(token, { clientId, scopes, resource, expiresAt: Date.now() + 3_600_000 });
    refresh.set(refreshToken, { clientId, scopes, resource });
    issued.access.push(token);
    issued.refresh.push(refreshToken);
    return {
      access_token: token,
      token_type: 'bearer',
      expires_in: 3600,
      refresh_token: refreshToken,
      scope: scopes.join(' '),
    };
  };
  const provider = {
    clientsStore: new DemoInMemoryClientsStore(),
    async authorize(client, params, res) {
      if (!client.redirect_uris.includes(params.redirectUri)) throw new Error('unregistered redirect_uri');
      const code = randomUUID();
      codes.set(code, { client, params });
      const target = new URL(params.redirectUri);
      target.searchParams.set('code', code);
      if (params.state !== undefined) target.searchParams.set('state', params.state);
      res.redirect(target.href); // the user "signs in" at once
    },
    async challengeForAuthorizationCode(_client, code) {
      const found = codes.get(code);
      if (!found) throw new InvalidGrantError('unknown code');
      return found.params.codeChallenge;
    },
    async exchangeAuthorizationCode(client, code) {
      const found = codes.get(code);
      if (!found || found.client.client_id !== client.client_id) throw new InvalidGrantError('unknown code');
      codes.delete(code);
      return issue(client.client_id, found.params.scopes ?? [], found.params.resource?.href);
    },
    async exchangeRefreshToken(client, refreshToken) {
      const found = refresh.get(refreshToken);
      if (!found || found.clientId !== client.client_id) throw new InvalidGrantError('unknown refresh token');
      refresh.delete(refreshToken);
      issued.refreshed++;
      return issue(client.client_id, found.scopes, found.resource);
    },
    async verifyAccessToken(token) {
      const found = access.get(token);
      if (!found || found.expiresAt < Date.now()) throw new InvalidTokenError('invalid or expired token');
      return {
        token,
        clientId: found.clientId,
        scopes: found.scopes,
        expiresAt: Math.floor(found.expiresAt / 1000),
      };
    },
  };
  const authApp = express();
  const authBase = await listen(authApp);
  const issuerUrl = new URL(authBase);
  authApp.use(mcpAuthRouter({ provider, issuerUrl, scopesSupported: ['mcp:tools'] }));
  authApp.get('/test/issued', (_req, res) => res.json(issued));
  authApp.post('/test/expire', (_req, res) => {
    for (const token of access.values()) token.expiresAt = 0;
    res.json({ expired: access.size });
  });

  const mcpApp = express();
  const mcpBase = await listen(mcpApp);
  const mcpUrl = new URL(`${mcpBase}/mcp`);
  mcpApp.use(
    mcpAuthMetadataRouter({
      oauthMetadata: createOAuthMetadata({ provider, issuerUrl, scopesSupported: ['mcp:tools'] }),
      resourceServerUrl: mcpUrl,
      scopesSupported: ['mcp:tools'],
    }),
  );
  const bearer = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  mcpApp.all('/mcp', express.json(), bearer, (req, res) => void streamable(req, res, req.body));
  console.log(JSON.stringify({ url: mcpUrl.href, control: authBase }));
} else {
  console.error(`usage: http-server.mjs streamable|sse|oauth (not ${mode})`);
  process.exit(2);
}
