/**
 * Synchronous SQL on PostgreSQL, for the stores whose interfaces are synchronous (the ledger and the
 * transcript: the turn engine commits an entry and goes on in the same tick, as it does on SQLite).
 *
 * A worker thread owns one connection. A call posts its statements to the worker and blocks on a
 * shared flag (`Atomics.wait`) until the worker has run them in one transaction and answered; the
 * answer is then taken off the port with `receiveMessageOnPort`. The event loop is held for one round
 * trip to the server, as a better-sqlite3 commit holds it for an fsync.
 *
 * A fenced write is one statement (database.ts, `append_ledger`): one round trip, committed alone.
 */
import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';

export interface Statement {
  text: string;
  values?: readonly unknown[];
}

export interface StatementResult {
  rows: Record<string, unknown>[];
  rowCount: number;
}

/** The worker gave no answer in time (it is stopped; the next call starts another). */
export class SyncSqlTimeout extends Error {
  override readonly name = 'SyncSqlTimeout';
}

type Reply =
  | { id: number; ok: true; results: StatementResult[] }
  | { id: number; ok: false; message: string; code?: string };

/** The worker: plain CommonJS run with `eval`, so it needs no file of its own next to a bundle. */
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const pg = require(workerData.pg);
const { port, flag, url, statementTimeoutMs, applicationName } = workerData;
const client = new pg.Client({
  connectionString: url,
  statement_timeout: statementTimeoutMs,
  application_name: applicationName,
});
let broken = null;
const ready = client.connect().catch((error) => { broken = error; });
client.on('error', (error) => { broken = error; });
let queue = Promise.resolve();
function answer(reply) {
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}
port.on('message', (request) => {
  queue = queue.then(async () => {
    await ready;
    if (broken) return answer({ id: request.id, ok: false, message: broken.message, code: broken.code });
    const results = [];
    let open = false;
    try {
      if (request.transaction) { await client.query('BEGIN'); open = true; }
      for (const step of request.statements) {
        const result = await client.query(step.text, step.values || []);
        results.push({ rows: result.rows || [], rowCount: result.rowCount || 0 });
      }
      if (open) await client.query('COMMIT');
      answer({ id: request.id, ok: true, results });
    } catch (error) {
      if (open) await client.query('ROLLBACK').catch(() => undefined);
      answer({ id: request.id, ok: false, message: error.message, code: error.code });
    }
  });
});
`;

const pgModule = createRequire(import.meta.url).resolve('pg');

export class SyncSql {
  private worker: Worker | null = null;
  private port: MessagePort | null = null;
  private readonly flag = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  private nextId = 0;

  constructor(
    private readonly url: string,
    /** The server cancels a statement after this; a call waits this plus a margin for its answer. */
    private readonly statementTimeoutMs = 15_000,
    /** The connection's name on the server (pg_stat_activity). */
    private readonly applicationName = 'sendbox sync',
  ) {}

  /**
   * Starts the worker now; it connects at once, in the background. The first statement then does
   * not wait for a thread to start and a connection to open (a worker's first turn did, 0.4 s).
   */
  connect(): void {
    this.start();
  }

  /** True once the worker was started (connect, or a first statement), until close. */
  get started(): boolean {
    return this.worker !== null;
  }

  /** Runs the statements in one transaction: all or nothing. */
  transaction(statements: readonly Statement[]): StatementResult[] {
    return this.call(statements, true);
  }

  /** Runs one statement on its own. */
  query(text: string, values: readonly unknown[] = []): StatementResult {
    return this.call([{ text, values }], false)[0]!;
  }

  close(): void {
    void this.worker?.terminate();
    this.port?.close();
    this.worker = null;
    this.port = null;
  }

  private call(statements: readonly Statement[], transaction: boolean): StatementResult[] {
    const port = this.start();
    const id = ++this.nextId;
    Atomics.store(this.flag, 0, 0);
    port.postMessage({ id, transaction, statements });
    // Connecting on first use counts too: a margin over the server's own limit.
    const waited = Atomics.wait(this.flag, 0, 0, this.statementTimeoutMs + 10_000);
    const message = receiveMessageOnPort(port)?.message as Reply | undefined;
    if (waited === 'timed-out' || !message || message.id !== id) {
      this.close();
      throw new SyncSqlTimeout(
        `PostgreSQL at ${this.url.replace(/:[^:@/]*@/, ':***@')} gave no answer in ${(this.statementTimeoutMs + 10_000) / 1000} s; the write may or may not have been committed`,
      );
    }
    if (message.ok) return message.results;
    const error = new Error(message.message) as Error & { code?: string };
    if (message.code) error.code = message.code;
    throw error;
  }

  private start(): MessagePort {
    if (this.port) return this.port;
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        pg: pgModule,
        port: port2,
        flag: this.flag,
        url: this.url,
        statementTimeoutMs: this.statementTimeoutMs,
        applicationName: this.applicationName,
      },
      transferList: [port2],
    });
    // The worker must not keep the process alive, nor its failure take it down: a call reports it.
    worker.unref();
    worker.on('error', () => undefined);
    port1.unref();
    this.worker = worker;
    this.port = port1;
    return port1;
  }
}
