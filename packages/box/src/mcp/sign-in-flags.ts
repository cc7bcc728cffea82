/**
 * The HTTP servers that asked the user to sign in (a call or a test met McpAuthRequired), until a
 * connect answers: the settings panel's "sign in" on a server. A single box keeps them in memory (a
 * restart forgets them, and the next call that needs a sign-in sets the flag again); a cluster keeps
 * them in a document every worker shares (issue 25), so a flag set by a turn on one worker is shown
 * by every gateway, and a sign-in through any gateway clears it for all.
 */
import type { StoredDocument } from '../stores/documents.ts';

export interface SignInFlags {
  add(server: string): Promise<void>;
  delete(server: string): Promise<void>;
  has(server: string): Promise<boolean>;
}

/** One box's flags, in memory. */
export class LocalSignInFlags implements SignInFlags {
  private readonly servers = new Set<string>();

  add(server: string): Promise<void> {
    this.servers.add(server);
    return Promise.resolve();
  }

  delete(server: string): Promise<void> {
    this.servers.delete(server);
    return Promise.resolve();
  }

  has(server: string): Promise<boolean> {
    return Promise.resolve(this.servers.has(server));
  }
}

/** A cluster's flags: `{servers: [names]}` in a shared document, changed one change at a time. */
export class DocumentSignInFlags implements SignInFlags {
  constructor(private readonly document: StoredDocument) {}

  async add(server: string): Promise<void> {
    if (await this.has(server)) return;
    await this.change((servers) => servers.add(server));
  }

  async delete(server: string): Promise<void> {
    if (!(await this.has(server))) return;
    await this.change((servers) => servers.delete(server));
  }

  async has(server: string): Promise<boolean> {
    return namesOf(await this.document.read()).has(server);
  }

  private change(edit: (servers: Set<string>) => void): Promise<void> {
    return this.document.update((current) => {
      const servers = namesOf(current);
      edit(servers);
      return { value: { servers: [...servers].sort() }, result: undefined };
    });
  }
}

/** The names a document holds (a value of another shape holds none: the flags are only hints). */
function namesOf(value: unknown): Set<string> {
  const servers = (value as { servers?: unknown } | undefined)?.servers;
  return new Set(Array.isArray(servers) ? servers.filter((name) => typeof name === 'string') : []);
}
