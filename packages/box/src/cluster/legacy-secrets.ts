/**
 * Agent secrets a cluster saved before it had a secrets key of its own (before 9672f08 they were
 * sealed with the master key itself): at a worker's start, every `secrets` row the secrets key does
 * not open but the master key does is sealed again under the secrets key, so it decrypts on every
 * worker. A row neither opens is left as it is: reading it says the key differs.
 */
import type { Database } from '../stores/postgres/database.ts';
import { openSecret, sealSecret } from '../stores/postgres/secrets.ts';

export async function resealLegacySecrets(
  db: Database,
  masterKey: Buffer,
  secretsKey: Buffer,
): Promise<number> {
  const table = db.table('secrets');
  const { rows } = await db.pool.query<{
    agent_id: string;
    name: string;
    iv: Buffer;
    tag: Buffer;
    data: Buffer;
  }>(`SELECT agent_id, name, iv, tag, data FROM ${table}`);
  let resealed = 0;
  for (const row of rows) {
    if (opens(secretsKey, row.agent_id, row) !== null) continue;
    const value = opens(masterKey, row.agent_id, row);
    if (value === null) continue;
    const sealed = sealSecret(secretsKey, row.agent_id, row.name, value);
    // Only the row as read: a worker that re-sealed or replaced it meanwhile wins.
    const { rowCount } = await db.pool.query(
      `UPDATE ${table} SET iv = $3, tag = $4, data = $5 WHERE agent_id = $1 AND name = $2 AND iv = $6`,
      [row.agent_id, row.name, sealed.iv, sealed.tag, sealed.data, row.iv],
    );
    resealed += rowCount ?? 0;
  }
  return resealed;
}

function opens(
  key: Buffer,
  owner: string,
  row: { name: string; iv: Buffer; tag: Buffer; data: Buffer },
): string | null {
  try {
    return openSecret(key, owner, row);
  } catch {
    return null;
  }
}
