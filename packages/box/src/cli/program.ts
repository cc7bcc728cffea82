/** The `sendbox` command line: `serve` (the default command), `export`, `login`, `sessions` and `logout`. */
import { Command, InvalidArgumentError, Option } from '@commander-js/extra-typings';
import path from 'node:path';
import pc from 'picocolors';
import { DEFAULT_GATEWAY_HOST, DEFAULT_GATEWAY_PORT } from '../gateway/index.ts';
import { describeSessions, endBrowserSessions, listBrowserSessions } from './browser-sessions.ts';
import { freshLoginUrl } from './login.ts';
import { boxVersion, defaultDataDir, serve } from './serve.ts';
import type { OpenHost, RunningBox, Terminal } from './serve.ts';

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError('expected a port number from 0 to 65535 (0 picks a free one)');
  }
  return port;
}

/** `--database-url`: the command acts on that cluster (cluster/cli-access.ts), not on the data dir's files. */
function clusterUrlOption() {
  return new Option(
    '--database-url <url>',
    "a cluster's PostgreSQL: act on the cluster (every gateway), not on the data dir's files",
  ).env('SENDBOX_DATABASE_URL');
}

function dataDirOption(description: string) {
  return new Option('--data-dir <dir>', description).default(defaultDataDir(), '$HOME/agent-data');
}

export const processTerminal: Terminal = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/**
 * Stops the box on SIGINT/SIGTERM; a second signal exits at once. Installed before the box starts, so
 * a signal sent as soon as the box says where it runs stops it cleanly instead of finding Node's default
 * action (killed, exit code null) in the moment between that line and the handlers. A signal during
 * the start stops the box once it is up.
 */
function stopOnSignals(terminal: Terminal): { started(box: RunningBox): void; release(): void } {
  let received = false;
  let box: RunningBox | null = null;
  const stop = (running: RunningBox): void => {
    running.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        terminal.err(
          pc.red(`error while stopping: ${error instanceof Error ? error.message : String(error)}`),
        );
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (received) {
      terminal.err(`${signal} again: exiting without waiting for running turns.`);
      process.exit(130);
    }
    received = true;
    terminal.err(`${signal}: stopping (waiting for running turns; press Ctrl+C again to force)…`);
    if (box !== null) stop(box);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    started(running) {
      box = running;
      if (received) stop(running);
    },
    /** The start failed: signals get Node's default action again (Ctrl+C ends a stuck exit). */
    release() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** `--database-url` and `--object-store-url`: both or neither. */
function clusterOption(databaseUrl: string | undefined, objectStoreUrl: string | undefined) {
  if (databaseUrl === undefined && objectStoreUrl === undefined) return {};
  if (databaseUrl === undefined) {
    throw new InvalidArgumentError(
      '--object-store-url is for a cluster: give its PostgreSQL too (--database-url or SENDBOX_DATABASE_URL)',
    );
  }
  if (objectStoreUrl === undefined) {
    throw new InvalidArgumentError(
      "--database-url needs the cluster's bucket too (--object-store-url s3://bucket?endpoint=…&region=…, or SENDBOX_OBJECT_STORE_URL): every worker must reach every attachment",
    );
  }
  return { cluster: { databaseUrl, objectStoreUrl } };
}

export function sendboxProgram(openHost: OpenHost, terminal: Terminal = processTerminal) {
  const program = new Command()
    .name('sendbox')
    .description('An open, Grok-Bot-compatible agent box: runs agents and serves their web UI on loopback.')
    .version(boxVersion());

  program
    .command('serve', { isDefault: true })
    .description('start the box: the gateway (HTTP API + web UI) on 127.0.0.1')
    .addOption(
      new Option(
        '--host <address>',
        'address to listen on: loopback (127.0.0.1, ::1, localhost), or with --public-url any (0.0.0.0, ::)',
      ).default(DEFAULT_GATEWAY_HOST),
    )
    .addOption(
      new Option(
        '--public-url <url>',
        'the https address a TLS-terminating reverse proxy serves this box at (docs/deploy.md)',
      ).env('SENDBOX_PUBLIC_URL'),
    )
    .addOption(
      new Option('--port <port>', 'port to listen on').argParser(parsePort).default(DEFAULT_GATEWAY_PORT),
    )
    .addOption(dataDirOption('where agents live (Grok Bot layout)'))
    .addOption(
      new Option(
        '--database-url <url>',
        "run as a worker of a cluster: the agents' data in this PostgreSQL (postgres://…; docs/cluster.md)",
      ).env('SENDBOX_DATABASE_URL'),
    )
    .addOption(
      new Option(
        '--object-store-url <url>',
        "with --database-url: the cluster's bucket for attachments (s3://bucket?endpoint=…&region=…)",
      ).env('SENDBOX_OBJECT_STORE_URL'),
    )
    .option('--no-build', 'do not build the web UI, even if it is missing or stale')
    .option('--verbose', 'log one line per request (never bodies or headers)', false)
    .option(
      '--unsafe-host-tools',
      'when bubblewrap cannot confine tools, run them on the host anyway (agents can then read everything you can)',
      false,
    )
    .action(async (options) => {
      const signals = stopOnSignals(terminal);
      let box: RunningBox;
      try {
        box = await serve(
          {
            host: options.host,
            ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
            port: options.port,
            dataDir: options.dataDir,
            build: options.build,
            verbose: options.verbose,
            unsafeHostTools: options.unsafeHostTools,
            ...clusterOption(options.databaseUrl, options.objectStoreUrl),
          },
          openHost,
          terminal,
        );
      } catch (error) {
        signals.release();
        throw error;
      }
      signals.started(box);
    });

  program
    .command('export')
    .description(
      "write a cluster's agents out in Grok Bot's layout (agents/, agent-transcripts/), for txcript and every reader of it",
    )
    .addOption(
      new Option('--database-url <url>', "the cluster's PostgreSQL (postgres://…)")
        .env('SENDBOX_DATABASE_URL')
        .makeOptionMandatory(),
    )
    .requiredOption('--out <dir>', 'where to write them (created if missing)')
    .option('--schema <name>', "the cluster's schema", 'sendbox')
    .action(async (options) => {
      // Loaded only here: the PostgreSQL client is no cost of the other commands.
      const { openDatabase } = await import('../stores/postgres/database.ts');
      const { exportCluster } = await import('../cluster/export.ts');
      const db = await openDatabase(options.databaseUrl, { schema: options.schema });
      try {
        const out = path.resolve(options.out);
        const done = await exportCluster(db, out);
        terminal.out(
          `exported ${done.agents} agent(s), ${done.entries} ledger entries and ${done.transcriptBytes} bytes of transcript to ${out}`,
        );
      } finally {
        await db.close();
      }
    });

  program
    .command('login')
    .description('print a fresh one-time link that signs a browser in to the running box')
    .addOption(dataDirOption('the data dir of the running box (a cluster worker: its gateway)'))
    .addOption(clusterUrlOption())
    .option('--schema <name>', "the cluster's schema", 'sendbox')
    .addOption(
      new Option('--master-key-file <file>', "the cluster's master key (with --database-url)").env(
        'SENDBOX_MASTER_KEY_FILE',
      ),
    )
    .action(async (options) => {
      const key = options.databaseUrl
        ? await (
            await import('../cluster/cli-access.ts')
          ).clusterSessionKey(
            { databaseUrl: options.databaseUrl, schema: options.schema },
            options.masterKeyFile,
          )
        : undefined;
      terminal.out(await freshLoginUrl(options.dataDir, key));
    });

  program
    .command('sessions')
    .description('list the browsers signed in to the box (id, last use, end, browser)')
    .addOption(dataDirOption('the data dir of the box'))
    .addOption(clusterUrlOption())
    .option('--schema <name>', "the cluster's schema", 'sendbox')
    .action(async (options) => {
      const rows = options.databaseUrl
        ? await (
            await import('../cluster/cli-access.ts')
          ).listClusterSessions({ databaseUrl: options.databaseUrl, schema: options.schema })
        : await listBrowserSessions(options.dataDir);
      for (const line of describeSessions(rows)) terminal.out(line);
    });

  program
    .command('logout')
    .description('sign browsers out: the sessions named (ids from `sendbox sessions`), or --all')
    .argument('[ids...]', 'sessions to end')
    .option('--all', 'sign every browser out', false)
    .addOption(dataDirOption('the data dir of the box'))
    .addOption(clusterUrlOption())
    .option('--schema <name>', "the cluster's schema", 'sendbox')
    .action(async (ids, options) => {
      if (options.all === ids.length > 0) {
        throw new InvalidArgumentError(
          options.all
            ? 'pass either --all or session ids, not both'
            : 'name the sessions to end (`sendbox sessions` lists them), or pass --all',
        );
      }
      const which = options.all ? 'all' : ids;
      const ended = options.databaseUrl
        ? await (
            await import('../cluster/cli-access.ts')
          ).endClusterSessions({ databaseUrl: options.databaseUrl, schema: options.schema }, which)
        : await endBrowserSessions(options.dataDir, which);
      const missed = options.all ? [] : ids.filter((id) => !ended.includes(id));
      terminal.out(`signed out ${ended.length} browser session${ended.length === 1 ? '' : 's'}`);
      if (missed.length > 0) terminal.err(`no such session: ${missed.join(', ')} (already ended?)`);
    });

  return program;
}
