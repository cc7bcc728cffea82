/**
 * `sendbox serve` in this process, so the moment it says where it runs can be
 * inspected: a supervisor (or a test) that sends SIGTERM on reading that line
 * must find the box's handler, not Node's default action.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openTestHost } from '../gateway/test-host.ts';
import { testModel } from '../gateway/test-model.ts';
import { sendboxProgram } from './program.ts';

const signals = ['SIGINT', 'SIGTERM'] as const;
const before = new Map(signals.map((signal) => [signal, process.listeners(signal)]));
afterEach(() => {
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.includes(listener)) process.removeListener(signal, listener);
    }
  }
  vi.restoreAllMocks();
});

describe('sendbox serve and signals', () => {
  it('handles SIGTERM before it prints where it runs, and then stops cleanly with exit code 0', async () => {
    const dataDir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sendbox-program-'));
    const handledAtBanner: number[] = [];
    const out: string[] = [];
    const terminal = {
      out: (line: string) => {
        out.push(line);
        if (line.startsWith('sendbox is running at')) {
          handledAtBanner.push(process.listenerCount('SIGTERM') - before.get('SIGTERM')!.length);
        }
      },
      err: () => undefined,
    };
    const exited = new Promise<number | undefined>((resolve) => {
      vi.spyOn(process, 'exit').mockImplementation(((code?: number) => resolve(code)) as never);
    });
    try {
      const program = sendboxProgram((dir) => openTestHost(dir, testModel()), terminal);
      await program.parseAsync(['serve', '--port', '0', '--no-build', '--data-dir', dataDir], {
        from: 'user',
      });
      expect(handledAtBanner).toEqual([1]);
      expect(fs.existsSync(path.join(dataDir, 'gateway.json'))).toBe(true);

      process.emit('SIGTERM', 'SIGTERM');
      expect(await exited).toBe(0);
      expect(fs.existsSync(path.join(dataDir, 'gateway.json'))).toBe(false);
    } finally {
      await fs.promises.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('gives the signals back when the start fails', async () => {
    const dataDir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sendbox-program-'));
    try {
      const program = sendboxProgram(() => Promise.reject(new Error('no host today')), {
        out: () => undefined,
        err: () => undefined,
      });
      await expect(
        program.parseAsync(['serve', '--port', '0', '--no-build', '--data-dir', dataDir], { from: 'user' }),
      ).rejects.toThrow('no host today');
      for (const signal of signals) expect(process.listeners(signal), signal).toEqual(before.get(signal));
    } finally {
      await fs.promises.rm(dataDir, { recursive: true, force: true });
    }
  });
});
