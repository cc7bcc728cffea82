/** The sendbox command the terminal prints is one the user can paste, installed or not. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SENDBOX_BIN, sendboxCommand } from './command-name.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'sendbox-command-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function binDir(name: string, target: string): string {
  const bin = path.join(dir, name);
  rmSync(bin, { recursive: true, force: true });
  mkdirSync(bin);
  symlinkSync(target, path.join(bin, 'sendbox'));
  return bin;
}

describe('sendboxCommand', () => {
  it('is `sendbox …` when the sendbox on PATH is this box (npm link, npm install -g)', () => {
    const bin = binDir('linked', SENDBOX_BIN);
    expect(sendboxCommand('login', { PATH: `/nonexistent${path.delimiter}${bin}` })).toBe('sendbox login');
  });

  it('names this executable when PATH has no sendbox, another one, or only the one npm adds for its scripts', () => {
    const npmBin = path.join(dir, 'node_modules', '.bin');
    mkdirSync(npmBin, { recursive: true });
    symlinkSync(SENDBOX_BIN, path.join(npmBin, 'sendbox'));
    expect(sendboxCommand('login', { PATH: npmBin })).toBe(`node ${SENDBOX_BIN} login`);
    expect(sendboxCommand('login --data-dir /d', { PATH: '/nonexistent' })).toBe(
      `node ${SENDBOX_BIN} login --data-dir /d`,
    );
    const other = path.join(dir, 'other.mjs');
    writeFileSync(other, '#!/usr/bin/env node\n', { mode: 0o755 });
    const bin = binDir('other', other);
    expect(sendboxCommand('login', { PATH: bin })).toBe(`node ${SENDBOX_BIN} login`);
  });
});
