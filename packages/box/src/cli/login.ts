/**
 * `sendbox login`: a fresh one-time login link for the box running on a data dir,
 * minted in this process from `gateway.json` (which names the running gateway and its
 * token) and the kept session key; the running gateway verifies and redeems it
 * (gateway/session.ts).
 */
import path from 'node:path';
import { loginUrl, mintLoginCode, readGatewayDescriptor, readSessionKey } from '../gateway/index.ts';

export class LoginError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoginError';
  }
}

/**
 * `sessionKey`: the key to sign with (a cluster's, cluster/cli-access.ts); default: the data dir's
 * session.key, a single box's.
 */
export async function freshLoginUrl(dataDir: string, sessionKey?: Buffer): Promise<string> {
  const dir = path.resolve(dataDir);
  const descriptor = await readGatewayDescriptor(dir);
  if (descriptor === null) {
    throw new LoginError(
      `no sendbox is running on ${dir} (no readable gateway.json there); start it with \`sendbox serve --data-dir ${dir}\`, which prints a login link`,
    );
  }
  const key = sessionKey ?? (await readSessionKey(dir));
  if (key === null) {
    throw new LoginError(
      `${dir} has no session.key; restart \`sendbox serve\` on it, which creates one (a cluster worker's data dir has none: ` +
        'pass --database-url, or set SENDBOX_DATABASE_URL)',
    );
  }
  const host = descriptor.host.includes(':') ? `[${descriptor.host}]` : descriptor.host;
  return loginUrl(`http://${host}:${descriptor.port}/`, mintLoginCode(key, descriptor.token));
}
