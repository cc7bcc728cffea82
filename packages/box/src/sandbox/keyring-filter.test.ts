/**
 * The keyring filter as the kernel runs it: a small classic-BPF interpreter
 * (the four instructions the filter uses) over every ABI, including the ones
 * this machine cannot run (i386 and x32 on x86_64, arm on aarch64). The real
 * kernel's answer for the native ABI is checked in isolation.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { keyringFilter } from './keyring-filter.ts';

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;

/** Runs the program on seccomp_data {nr, arch}; returns the action. */
function run(program: Buffer, nr: number, arch: number): number {
  const data = [nr >>> 0, arch >>> 0];
  let a = 0;
  for (let pc = 0; pc < program.length / 8; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) a = data[k / 4]!;
    else if (code === 0x54) a = (a & k) >>> 0;
    else if (code === 0x15) pc += a === k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected instruction ${code}`);
  }
  throw new Error('the program ran off its end');
}

const ABIS = {
  x86_64: { arch: 0xc000003e, calls: [248, 249, 250], others: [0, 1, 59, 56, 435] },
  x32: { arch: 0xc000003e, calls: [248, 249, 250].map((n) => n | 0x40000000), others: [0x40000000] },
  i386: { arch: 0x40000003, calls: [286, 287, 288], others: [3, 4, 11, 120] },
  aarch64: { arch: 0xc00000b7, calls: [217, 218, 219], others: [63, 64, 220, 221] },
  arm: { arch: 0x40000028, calls: [309, 310, 311], others: [3, 4, 11, 120] },
};

describe('the keyring filter', () => {
  for (const [machine, abis] of [
    ['x64', ['x86_64', 'x32', 'i386']],
    ['arm64', ['aarch64', 'arm']],
  ] as const) {
    it(`on ${machine}, refuses add_key, request_key and keyctl on each ABI and lets the rest through`, () => {
      const program = keyringFilter(machine)!;
      expect(program.length % 8).toBe(0);
      for (const abi of abis) {
        const { arch, calls, others } = ABIS[abi];
        for (const nr of calls) expect(run(program, nr, arch), `${abi} ${nr}`).toBe(EPERM);
        for (const nr of others) expect(run(program, nr, arch), `${abi} ${nr}`).toBe(ALLOW);
      }
    });
  }

  it('has no filter for an architecture it does not know (and says so by returning null)', () => {
    expect(keyringFilter('riscv64')).toBeNull();
  });
});
