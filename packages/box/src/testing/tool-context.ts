/**
 * Test fixture: a sandbox folder in a fresh temp dir and the `ToolContext` a tool runs with there.
 * Never used outside tests.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { noScrub, type Scrubber } from '../secrets/scrub.ts';
import type { TodoItem, ToolContext, ToolEnvelope } from '../tools/types.ts';

export interface ToolSandbox {
  root: string;
  sandbox: string;
  ctx: ToolContext;
  dispose(): Promise<void>;
}

export async function toolSandbox(options: { scrub?: Scrubber } = {}): Promise<ToolSandbox> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'sendbox-tool-'));
  const sandbox = path.join(root, 'sandbox');
  await mkdir(sandbox);
  return {
    root,
    sandbox,
    ctx: {
      sandboxDir: sandbox,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      scrub: options.scrub ?? noScrub,
      todos: [] as TodoItem[],
      now: () => 1000,
    },
    dispose: () => rm(root, { recursive: true, force: true }),
  };
}

/** The message of an `error` envelope (either key); throws on any other envelope. */
export function errorText(envelope: ToolEnvelope): string {
  if (!('error' in envelope)) throw new Error(`expected an error envelope, got ${JSON.stringify(envelope)}`);
  return 'error' in envelope.error ? envelope.error.error : envelope.error.errorMessage;
}

/** The `success` object of an envelope; throws on any other envelope. */
export function successOf(envelope: ToolEnvelope): Record<string, unknown> {
  if (!('success' in envelope)) throw new Error(`expected success, got ${JSON.stringify(envelope)}`);
  return envelope.success;
}
