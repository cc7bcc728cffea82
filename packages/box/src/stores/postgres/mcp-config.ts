/**
 * The box's MCP servers in a cluster (`mcp_config`, one row): the document `mcp.json` holds in a
 * single box, checked by the same code (mcp/config.ts), so a server added through one gateway is
 * there for a turn on any worker. Read from the database at each use (parsed again only when its
 * version changed); an edit is a read-modify-write under the row's lock.
 */
import { readFile } from 'node:fs/promises';
import {
  ParsedMcpConfig,
  serversOf,
  withServer,
  type McpConfig,
  type McpConfigSource,
} from '../../mcp/config.ts';
import { isNotFound } from '../../sandbox/paths.ts';
import type { Database } from './database.ts';

export class PgMcpConfig implements McpConfigSource {
  readonly file: string;
  private readonly parsed: ParsedMcpConfig;

  constructor(
    private readonly db: Database,
    /** Told each new set of problems once (the terminal). */
    onProblems: (problems: readonly string[]) => void = () => {},
  ) {
    this.file = `PostgreSQL ${db.table('mcp_config')}`;
    this.parsed = new ParsedMcpConfig(this.file, onProblems);
  }

  async current(): Promise<McpConfig> {
    const { rows } = await this.db.pool.query<{ doc: string }>(
      `SELECT doc FROM ${this.db.table('mcp_config')}`,
    );
    const doc = rows[0]?.doc;
    return this.parsed.of(doc ?? null, () => Promise.resolve(doc ?? ''));
  }

  async rawServers(): Promise<Record<string, unknown>> {
    const { rows } = await this.db.pool.query<{ doc: string }>(
      `SELECT doc FROM ${this.db.table('mcp_config')}`,
    );
    return rows[0] ? serversOf(this.document(rows[0].doc), this.file) : {};
  }

  async setServer(name: string, raw: unknown, previousName?: string): Promise<void> {
    const table = this.db.table('mcp_config');
    const client = await this.db.pool.connect();
    try {
      await client.query('BEGIN');
      // The row is made first (empty) so that two first edits queue on its lock.
      await client.query(
        `INSERT INTO ${table} (doc, version) VALUES ('{"mcpServers": {}}', 0) ON CONFLICT (id) DO NOTHING`,
      );
      const { rows } = await client.query<{ doc: string }>(`SELECT doc FROM ${table} FOR UPDATE`);
      const whole = withServer(this.document(rows[0]!.doc), this.file, name, raw, previousName);
      await client.query(`UPDATE ${table} SET doc = $1, version = version + 1`, [
        JSON.stringify(whole, null, 2),
      ]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * At a worker's start: a cluster with no servers yet takes those of `mcp.json` in the worker's
   * data dir (an operator moving a single box to a cluster keeps its connectors). Once the cluster
   * has its own, a data dir's mcp.json is not read: the answer says so, for the box log.
   */
  async adopt(localFile: string): Promise<'adopted' | 'ignored' | 'none'> {
    let text: string;
    try {
      text = await readFile(localFile, 'utf8');
    } catch (error) {
      if (isNotFound(error)) return 'none';
      throw error;
    }
    const { rowCount } = await this.db.pool.query(
      `INSERT INTO ${this.db.table('mcp_config')} (doc, version) VALUES ($1, 1) ON CONFLICT (id) DO NOTHING`,
      [text],
    );
    return rowCount === 1 ? 'adopted' : 'ignored';
  }

  private document(text: string): Record<string, unknown> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new Error(`${this.file}: ${(error as Error).message}; fix the row by hand first`);
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json))
      throw new Error(`${this.file}: expected {"mcpServers": {...}}; fix the row by hand first`);
    return json as Record<string, unknown>;
  }
}
