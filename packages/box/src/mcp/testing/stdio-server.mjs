// A real MCP server on stdio (the SDK's McpServer) for the box's tests: it runs confined, as an
// agent's server would. Plain JavaScript, so node runs it inside the sandbox without a loader.
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer(
  { name: 'test-server', version: '1.0.0' },
  { instructions: 'A test server: echo, add, and probes of its confinement.' },
);
const text = (t) => ({ content: [{ type: 'text', text: t }] });

server.registerTool(
  'echo',
  { description: 'Echoes text back.', inputSchema: { text: z.string() } },
  async ({ text: t }) => text(`echo: ${t}`),
);
server.registerTool(
  'add',
  { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => text(String(a + b)),
);
server.registerTool('fail', { description: 'Always fails.' }, async () => ({
  isError: true,
  content: [{ type: 'text', text: 'the widget is out of stock' }],
}));
server.registerTool(
  'big',
  { description: 'A large result.', inputSchema: { bytes: z.number() } },
  async ({ bytes }) => {
    const line = 'x'.repeat(99) + '\n';
    return text(line.repeat(Math.ceil(bytes / 100)).slice(0, bytes));
  },
);
server.registerTool('hang', { description: 'Never answers.' }, () => new Promise(() => {}));
server.registerTool('crash_once', { description: 'Exits the first time it is called.' }, async () => {
  const mark = path.join(process.env.HOME, 'crashed-once');
  const crashed = await readFile(mark, 'utf8').then(
    () => true,
    () => false,
  );
  if (!crashed) {
    await writeFile(mark, 'yes');
    process.exit(3);
  }
  return text(`recovered, pid ${process.pid}`);
});
server.registerTool(
  'read_path',
  { description: 'Reads a file.', inputSchema: { path: z.string() } },
  async ({ path: p }) => {
    try {
      return text(`read ${(await readFile(p)).length} bytes`);
    } catch (error) {
      return text(`cannot read: ${error.code ?? error.message}`);
    }
  },
);
server.registerTool(
  'connect',
  { description: 'Opens a TCP connection.', inputSchema: { host: z.string(), port: z.number() } },
  ({ host, port }) =>
    new Promise((resolve) => {
      const socket = net.connect({ host, port });
      socket.setTimeout(3000, () => {
        socket.destroy();
        resolve(text('cannot connect: timeout'));
      });
      socket.on('connect', () => {
        socket.destroy();
        resolve(text('connected'));
      });
      socket.on('error', (error) => resolve(text(`cannot connect: ${error.code ?? error.message}`)));
    }),
);
server.registerTool(
  'http_get',
  {
    description: 'GETs an http:// URL through the proxy HTTP_PROXY names, as proxy-aware clients do.',
    inputSchema: { url: z.string() },
  },
  ({ url }) =>
    new Promise((resolve) => {
      if (!process.env.HTTP_PROXY) return resolve(text('no proxy: HTTP_PROXY is not set'));
      const proxy = new URL(process.env.HTTP_PROXY);
      const request = http.get(
        { host: proxy.hostname, port: Number(proxy.port), path: url, headers: { host: new URL(url).host } },
        (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => resolve(text(`${response.statusCode} ${body.trim()}`)));
        },
      );
      request.setTimeout(5000, () => {
        request.destroy();
        resolve(text('cannot get: timeout'));
      });
      request.on('error', (error) => resolve(text(`cannot get: ${error.code ?? error.message}`)));
    }),
);
server.registerTool('whoami', { description: 'Its uid, home and working folder.' }, async () =>
  text(
    JSON.stringify({
      uid: process.getuid(),
      home: process.env.HOME,
      cwd: process.cwd(),
      env: Object.keys(process.env).sort(),
    }),
  ),
);
server.registerTool('secret_env', { description: 'Says its API_TOKEN on stderr.' }, async () => {
  process.stderr.write(`token is ${process.env.API_TOKEN}\n`);
  return text(`length ${process.env.API_TOKEN?.length ?? 0}`);
});
server.registerTool('image', { description: 'A 1x1 PNG.' }, async () => ({
  content: [
    { type: 'text', text: 'a pixel' },
    {
      type: 'image',
      mimeType: 'image/png',
      data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    },
  ],
}));

await server.connect(new StdioServerTransport());
