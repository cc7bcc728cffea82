/**
 * For the tools' tests: a fresh sandbox folder in a temp dir (prepared for the machine's
 * confinement) and a ToolContext over it. Each test file calls `useToolSandbox()` once.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import { detectConfinement, type Confinement } from '../sandbox/confinement.ts';
import { noScrub } from '../secrets/scrub.ts';
import type { ToolContext, ToolEnvelope } from './types.ts';

export interface ToolSandbox {
  /** The temp dir holding the sandbox (outside it: where escapes would land). */
  root: string;
  sandbox: string;
  ctx: ToolContext;
  confinement: Confinement;
}

/** Registers hooks that give each test a new sandbox; read the fields inside a test. */
export function useToolSandbox(): ToolSandbox {
  const box = {} as ToolSandbox;
  beforeAll(async () => {
    box.confinement = await detectConfinement();
  });
  beforeEach(async () => {
    box.root = await mkdtemp(path.join(os.tmpdir(), 'sendbox-tools-'));
    box.sandbox = path.join(box.root, 'sandbox');
    await mkdir(box.sandbox);
    await box.confinement.prepare(box.sandbox);
    box.ctx = {
      sandboxDir: box.sandbox,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      scrub: noScrub,
      todos: [],
      now: () => 1000,
    };
  });
  afterEach(async () => {
    await rm(box.root, { recursive: true, force: true });
  });
  return box;
}

/** The message of an `error` envelope, under either of its real keys. */
export function errorText(envelope: ToolEnvelope): string {
  if (!('error' in envelope)) throw new Error(`expected an error envelope, got ${JSON.stringify(envelope)}`);
  return 'error' in envelope.error ? envelope.error.error : envelope.error.errorMessage;
}

/** The file's text, or null when it does not exist. */
export async function readIfExists(file: string): Promise<string | null> {
  return readFile(file, 'utf8').catch(() => null);
}

/** The `success` object of an envelope; throws on any other envelope. */
export function successOf(envelope: ToolEnvelope): Record<string, unknown> {
  if (!('success' in envelope)) throw new Error(`expected success, got ${JSON.stringify(envelope)}`);
  return envelope.success;
}
