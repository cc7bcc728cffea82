/**
 * The signed-in browsers (docs/gateway.md, "Signing in"): `listSessions` lists them,
 * `revokeSessions` ends some or all (`sendbox logout`), `signOut` ends the caller's own.
 */
import { z } from 'zod';
import { GatewayError } from './errors.ts';
import { method, type MethodContext } from './method-spec.ts';
import { SESSION_IDLE_MS, sessionIdSchema } from './session-book.ts';

const revokeInput = z.union([
  z.object({ all: z.literal(true) }).strict(),
  z.object({ ids: z.array(sessionIdSchema).min(1, 'name at least one session').max(256) }).strict(),
]);

function listSessions({ sessions, caller }: MethodContext) {
  return Promise.resolve({
    sessions: sessions.list().map((session) => ({
      ...session,
      expires: session.lastSeen + SESSION_IDLE_MS,
      current: session.id === caller,
    })),
  });
}

export const sessionMethods = {
  listSessions: method(z.object({}), listSessions),
  revokeSessions: method(revokeInput, async ({ sessions }, input) => ({
    revoked: await sessions.revoke('all' in input ? 'all' : input.ids),
  })),
  signOut: method(z.object({}), async ({ sessions, caller }) => {
    if (caller === null) {
      throw new GatewayError(
        'signOut ends the calling browser session, and a bearer-token call has none; use revokeSessions',
        400,
      );
    }
    await sessions.revoke([caller]);
    return { signedOut: true };
  }),
};
