/**
 * `sendbox serve` as a real process (the bin, through tsx), with no model
 * configured: it starts, says how to configure a model, serves the demo
 * agent, refuses a non-loopback address, and on SIGTERM stops cleanly and
 * takes gateway.json away.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RosterRow } from '../host/types.ts';
import type { ModelStatus } from '../providers/types.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { SseReader } from '../gateway/test-support.ts';
import { HOW_TO_CONFIGURE_MODEL } from '../providers/index.ts';
import { startOpenAiTestServer } from '../testing/openai-server.ts';
import { DEMO_HARNESS } from './demo-agent.ts';

const BIN = fileURLToPath(new URL('../../bin/sendbox.mjs', import.meta.url));

/** The environment without any model configuration, so the box starts in demo mode. */
function modelFreeEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '1' };
  for (const key of Object.keys(env)) {
    if (/^(XAI_|OPENAI_|SENDBOX_)/.test(key)) delete env[key];
  }
  return env;
}

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** The exit code, or `killed by <signal>` (so a failed expectation names the signal). */
  exited: Promise<number | string>;
}

function run(args: string[], env: NodeJS.ProcessEnv): Run {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? `killed by ${signal}`)),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function waitFor(
  read: () => string,
  pattern: RegExp,
  exited: Promise<unknown>,
): Promise<RegExpExecArray> {
  let done = false;
  void exited.then(() => (done = true));
  for (;;) {
    const match = pattern.exec(read());
    if (match) return match;
    if (done) throw new Error(`the process exited before printing ${String(pattern)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The address a `serve` prints, once it has printed every start-up line (they may arrive in several chunks). */
async function started(served: Run): Promise<string> {
  const at = (
    await waitFor(served.stdout, /sendbox is running at (http:\/\/127\.0\.0\.1:\d+\/)/, served.exited)
  )[1]!;
  await waitFor(served.stdout, /Press Ctrl\+C to stop/, served.exited);
  return at;
}

let home: string;
let dataDir: string;
let box: Run;
let url: string;
let token: string;

async function callAt(at: string, bearer: string, method: string, body: unknown = {}): Promise<unknown> {
  const response = await fetch(new URL(`api/${method}`, at), {
    method: 'POST',
    headers: { Authorization: `Bearer ${bearer}` },
    body: JSON.stringify(body),
  });
  expect(response.status, method).toBe(200);
  return response.json();
}

/** What the page sends after the login redirect: the cookie it set and the tab proof from the fragment. */
function browserHeaders(signIn: Response): Record<string, string> {
  expect(signIn.status).toBe(303);
  const proof = /#session=([\w-]+)$/.exec(signIn.headers.get('location') ?? '')?.[1];
  expect(proof).toBeDefined();
  return {
    Cookie: (signIn.headers.get('set-cookie') ?? '').split(';')[0]!,
    'X-Sendbox-Session': proof!,
    Origin: new URL(url).origin,
  };
}

function call(method: string, body: unknown = {}): Promise<unknown> {
  return callAt(url, token, method, body);
}

beforeAll(async () => {
  home = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sendbox-cli-'));
  dataDir = path.join(home, 'agent-data');
  box = run(['serve', '--port', '0', '--no-build'], modelFreeEnv(home));
  url = await started(box);
  const descriptor = JSON.parse(await fs.promises.readFile(path.join(dataDir, 'gateway.json'), 'utf8')) as {
    token: string;
    port: number;
  };
  token = descriptor.token;
  expect(url).toBe(`http://127.0.0.1:${descriptor.port}/`);
}, 60_000);

afterAll(async () => {
  if (box.child.exitCode === null) box.child.kill('SIGKILL');
  await fs.promises.rm(home, { recursive: true, force: true });
});

describe('sendbox serve without a model', () => {
  it('prints where it runs, the data dir (default $HOME/agent-data) and how to configure a model', () => {
    const out = box.stdout();
    expect(out).toContain(`data dir: ${dataDir}`);
    expect(out).toContain(HOW_TO_CONFIGURE_MODEL);
  });

  it('reports the same instructions through getStatus', async () => {
    const status = (await call('getStatus')) as { model: ModelStatus; version: string };
    expect(status.model.configured).toBe(false);
    expect(box.stdout()).toContain(status.model.howToConfigure);
  });

  it('serves the read-only demo agent with its attachment', async () => {
    const rows = (await call('listAgents')) as RosterRow[];
    const demo = rows.find((row) => row.harness === DEMO_HARNESS);
    expect(demo).toMatchObject({ readOnly: true });
    const { entries } = (await call('openAgent', { id: demo!.id })) as { entries: SequencedEntry[] };
    const pdf = entries.find((entry) => entry.kind === 'send-message' && entry.message.type === 'attachment');
    const sha256 =
      pdf?.kind === 'send-message' && pdf.message.type === 'attachment' ? pdf.message.sha256 : '';
    const file = await fetch(new URL(`api/attachment?agentId=${demo!.id}&sha256=${sha256}`, url), {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect((await file.text()).startsWith('%PDF-')).toBe(true);
  });

  it('prints a one-time login link, never the token', async () => {
    const link = /open this link to sign in[^\n]*?(http:\/\/127\.0\.0\.1:\d+\/login\?code=\S+)/.exec(
      box.stdout(),
    )?.[1];
    expect(link).toBeDefined();
    expect(box.stdout()).not.toContain(token);
    // Nothing named sendbox on this PATH: the command names this box's executable. The default data dir needs no flag.
    expect(box.stdout()).toContain(`\`node ${BIN} login\` prints a fresh one.`);
    const signIn = await fetch(link!, { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
    expect((await fetch(link!, { redirect: 'manual' })).status).toBe(403);
  });

  it('`sendbox login` prints a fresh link that the running box honours once', async () => {
    const login = run(['login', '--data-dir', dataDir], modelFreeEnv(home));
    expect(await login.exited).toBe(0);
    const link = login.stdout().trim();
    expect(link).toMatch(new RegExp(`^${url}login\\?code=\\S+$`));
    const signIn = await fetch(link, { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    const browser = browserHeaders(signIn);
    const signedIn = await fetch(new URL('api/listAgents', url), {
      method: 'POST',
      headers: browser,
      body: '{}',
    });
    expect(signedIn.status).toBe(200);
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(403);
  });

  it('`sendbox sessions` lists the signed-in browsers and `sendbox logout --all` ends them at once', async () => {
    const login = run(['login', '--data-dir', dataDir], modelFreeEnv(home));
    expect(await login.exited).toBe(0);
    const signIn = await fetch(login.stdout().trim(), {
      redirect: 'manual',
      headers: { 'User-Agent': 'CliTestBrowser/2' },
    });
    const browser = browserHeaders(signIn);
    const listed = run(['sessions', '--data-dir', dataDir], modelFreeEnv(home));
    expect(await listed.exited).toBe(0);
    expect(listed.stdout()).toMatch(
      /^[\w-]{22} {2}last used \S+, ends \S+, signed in \S+ {2}CliTestBrowser\/2$/m,
    );

    const refused = run(['logout', '--data-dir', dataDir], modelFreeEnv(home));
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toMatch(/name the sessions to end .*--all/);
    const logout = run(['logout', '--all', '--data-dir', dataDir], modelFreeEnv(home));
    expect(await logout.exited).toBe(0);
    expect(logout.stdout()).toMatch(/signed out [1-9]\d* browser sessions?/);
    const after = await fetch(new URL('api/listAgents', url), {
      method: 'POST',
      headers: browser,
      body: '{}',
    });
    expect(after.status).toBe(401);
    const empty = run(['sessions', '--data-dir', dataDir], modelFreeEnv(home));
    expect(await empty.exited).toBe(0);
    expect(empty.stdout().trim()).toBe('no browser is signed in');
  });

  it('stops on SIGTERM with exit code 0 and removes gateway.json', async () => {
    box.child.kill('SIGTERM');
    expect(await box.exited).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'gateway.json'))).toBe(false);
    expect(fs.existsSync(path.join(dataDir, 'agents'))).toBe(true);
  });

  it('`sendbox logout` ends a session in the session book while no box runs', async () => {
    const id = 'A'.repeat(22);
    const now = Date.now();
    await fs.promises.writeFile(
      path.join(dataDir, 'sessions.json'),
      JSON.stringify({ sessions: [{ id, created: now, lastSeen: now, browser: 'Offline/1' }] }),
      { mode: 0o600 },
    );
    const listed = run(['sessions', '--data-dir', dataDir], modelFreeEnv(home));
    expect(await listed.exited).toBe(0);
    expect(listed.stdout()).toContain(`${id}  last used`);
    const logout = run(['logout', id, '--data-dir', dataDir], modelFreeEnv(home));
    expect(await logout.exited).toBe(0);
    expect(logout.stdout()).toContain('signed out 1 browser session');
    const book = JSON.parse(await fs.promises.readFile(path.join(dataDir, 'sessions.json'), 'utf8')) as {
      sessions: unknown[];
    };
    expect(book.sessions).toEqual([]);
  });
});

describe('sendbox login without a running box', () => {
  it('says that no box runs there and how to start one', async () => {
    const empty = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sendbox-cli-login-'));
    try {
      const login = run(['login', '--data-dir', empty], modelFreeEnv(home));
      expect(await login.exited).toBe(1);
      expect(login.stderr()).toMatch(/no sendbox is running on .*sendbox serve --data-dir/);
    } finally {
      await fs.promises.rm(empty, { recursive: true, force: true });
    }
  });
});

describe('sendbox serve --host', () => {
  it('refuses a non-loopback address with a clear error', async () => {
    const refused = run(
      ['serve', '--host', '0.0.0.0', '--port', '0', '--no-build', '--data-dir', dataDir],
      modelFreeEnv(home),
    );
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toMatch(/refusing to listen on "0\.0\.0\.0" without --public-url.*ssh -L/s);
  });

  it('refuses a --public-url that is not https before touching the data dir', async () => {
    const fresh = path.join(home, 'never-created');
    const refused = run(
      [
        'serve',
        '--host',
        '0.0.0.0',
        '--public-url',
        'http://box.example.com',
        '--port',
        '0',
        '--no-build',
        '--data-dir',
        fresh,
      ],
      modelFreeEnv(home),
    );
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toMatch(/--public-url "http:\/\/box\.example\.com" must be an https URL/);
    expect(fs.existsSync(fresh)).toBe(false);
  });
});

describe('sendbox serve without usable bubblewrap', () => {
  /** What `serve` printed on stderr once it is up and `warning` is among it (the two pipes arrive in any order). */
  async function serveWith(args: string[], warning: RegExp): Promise<string> {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sendbox-cli-nobwrap-'));
    const env = { ...modelFreeEnv(dir), SENDBOX_BWRAP: '/nonexistent/bwrap' };
    const started = run(['serve', '--port', '0', '--no-build', ...args], env);
    try {
      await waitFor(started.stdout, /Press Ctrl\+C to stop/, started.exited);
      await waitFor(started.stderr, warning, started.exited);
      return started.stderr();
    } finally {
      started.child.kill('SIGTERM');
      await started.exited;
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
  }

  it('starts, says the shell tool is disabled, why and how to fix it', async () => {
    const stderr = await serveWith([], /The shell tool is disabled/);
    expect(stderr).toContain('The shell tool is disabled: bubblewrap (/nonexistent/bwrap) is not installed.');
    expect(stderr).toContain('apt-get install bubblewrap');
    expect(stderr).toContain('--unsafe-host-tools');
  });

  it('with --unsafe-host-tools, warns that tools run unconfined', async () => {
    expect(await serveWith(['--unsafe-host-tools'], /UNSAFE/)).toMatch(
      /UNSAFE: tools run on the host without confinement/,
    );
  });
});

describe('sendbox serve with an OpenAI-compatible model', () => {
  it('runs agents on the configured model and makes no demo agent', async () => {
    const model = await startOpenAiTestServer();
    const modelHome = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sendbox-cli-model-'));
    try {
      model.reply(
        {
          kind: 'message',
          toolCalls: [
            {
              id: 'call_1',
              name: 'send_message',
              arguments: JSON.stringify({ type: 'text', content: 'hello from the model' }),
            },
          ],
        },
        { kind: 'message', content: 'done' },
      );
      const env = {
        ...modelFreeEnv(modelHome),
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_API_KEY: 'test-key',
        SENDBOX_MODEL: 'loopback-model',
      };
      const served = run(['serve', '--port', '0', '--no-build'], env);
      try {
        const at = await started(served);
        expect(served.stdout()).toContain('model: openai-compatible loopback-model');
        expect(served.stdout()).not.toContain('No model is configured');
        const descriptor = JSON.parse(
          await fs.promises.readFile(path.join(modelHome, 'agent-data', 'gateway.json'), 'utf8'),
        ) as { token: string };

        expect(await callAt(at, descriptor.token, 'listAgents')).toEqual([]);
        const { agent } = (await callAt(at, descriptor.token, 'createAgent', { name: 'Live' })) as {
          agent: RosterRow;
        };
        expect(agent.readOnly).toBe(false);
        const stream = new SseReader(
          await fetch(new URL(`api/events?agentId=${agent.id}`, at), {
            headers: { Authorization: `Bearer ${descriptor.token}` },
          }),
        );
        await callAt(at, descriptor.token, 'sendPrompt', {
          agentId: agent.id,
          prompt: 'hi',
          clientNonce: 'live-1',
        });
        await stream.collect(
          (event) => event.event === 'entry' && JSON.stringify(event.data).includes('hello from the model'),
        );
        await stream.cancel();
        expect(model.requests[0]?.headers.authorization).toBe('Bearer test-key');
      } finally {
        served.child.kill('SIGTERM');
        expect(await served.exited).toBe(0);
      }
    } finally {
      await model.close();
      await fs.promises.rm(modelHome, { recursive: true, force: true });
    }
  });
});

describe('one box per data dir', () => {
  it('refuses a second serve on the same data dir (exit 1, naming the first), and the first serves on', async () => {
    const lockHome = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sendbox-cli-lock-'));
    const first = run(['serve', '--port', '0', '--no-build'], modelFreeEnv(lockHome));
    try {
      const at = (await waitFor(first.stdout, /running at (http:\/\/127\.0\.0\.1:\d+\/)/, first.exited))[1]!;
      const descriptorFile = path.join(lockHome, 'agent-data', 'gateway.json');
      const descriptor = fs.readFileSync(descriptorFile, 'utf8');
      const second = run(['serve', '--port', '0', '--no-build'], modelFreeEnv(lockHome));
      expect(await second.exited).toBe(1);
      expect(second.stderr()).toContain(`PID ${first.child.pid}, serving ${at}`);
      expect(second.stdout()).not.toContain('sendbox is running');
      // Deleting the lock's files changes nothing: the lock is on the folder itself.
      for (const name of ['sendbox.lock', 'sendbox.lock.json']) {
        fs.rmSync(path.join(lockHome, 'agent-data', name), { force: true });
      }
      const fourth = run(['serve', '--port', '0', '--no-build'], modelFreeEnv(lockHome));
      expect(await fourth.exited).toBe(1);
      expect(fourth.stderr()).toMatch(/another sendbox is running on the data dir/);
      // The first box's descriptor is untouched and it still answers.
      expect(fs.readFileSync(descriptorFile, 'utf8')).toBe(descriptor);
      const { token } = JSON.parse(descriptor) as { token: string };
      expect(await callAt(at, token, 'listAgents')).toEqual(expect.any(Array));

      // A box killed outright leaves its lock to the next one.
      first.child.kill('SIGKILL');
      await first.exited;
      const third = run(['serve', '--port', '0', '--no-build'], modelFreeEnv(lockHome));
      await waitFor(third.stdout, /sendbox is running at/, third.exited);
      third.child.kill('SIGTERM');
      expect(await third.exited).toBe(0);
    } finally {
      if (first.child.exitCode === null) first.child.kill('SIGKILL');
      await fs.promises.rm(lockHome, { recursive: true, force: true });
    }
  }, 60_000);
});
