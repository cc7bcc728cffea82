/**
 * A plain JSON file in the data dir as a StoredDocument (an agent's `approvals.json`): written
 * atomically (0600), changed one at a time by this box. A damaged file reads as an error and is
 * replaced whole by the next change.
 */
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../../fs/atomic.ts';
import { isNotFound } from '../../sandbox/paths.ts';
import type { StoredDocument } from '../documents.ts';

export class JsonFileDocument implements StoredDocument {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string) {}

  async read(): Promise<unknown> {
    await this.queue;
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new Error(`${this.file}: not JSON (${(error as Error).message})`, { cause: error });
    }
  }

  update<T>(change: (current: unknown) => { value: unknown; result: T }): Promise<T> {
    const run = this.queue.then(async () => {
      const current = await this.readNow().catch(() => undefined);
      const next = change(current);
      await writeFileAtomic(this.file, `${JSON.stringify(next.value, null, 2)}\n`, { mode: 0o600 });
      return next.result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async readNow(): Promise<unknown> {
    return JSON.parse(await readFile(this.file, 'utf8')) as unknown;
  }
}
