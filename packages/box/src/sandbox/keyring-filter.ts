/**
 * The one seccomp filter of the sandbox: no kernel keyring. Keyrings are not
 * namespaced: every sandbox inherits the box's session keyring, and a uid's
 * user keyring outlives its processes, so two agents (or an agent and the
 * next owner of its uid) could pass data through them. `add_key`,
 * `request_key` and `keyctl` fail with EPERM instead, as in Docker's default
 * profile. bubblewrap loads the program (`--seccomp FD`) before the
 * supervisor starts, for every ABI the machine's processes can call with.
 */

// Classic BPF (linux/filter.h, linux/seccomp.h, linux/audit.h).
const LD_W_ABS = 0x20;
const ALU_AND_K = 0x54;
const JEQ_K = 0x15;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_EPERM = 0x00050000 | 1;
/** seccomp_data: nr at 0, arch at 4. */
const NR = 0;
const ARCH = 4;
/** x32 calls are x86_64 calls with this bit set. */
const X32_BIT = 0x40000000;

/** add_key, request_key, keyctl for each ABI (the kernel's syscall tables). */
const KEYRING_CALLS: Record<string, { arch: number; calls: number[]; mask?: number }> = {
  x86_64: { arch: 0xc000003e, calls: [248, 249, 250], mask: ~X32_BIT >>> 0 },
  i386: { arch: 0x40000003, calls: [286, 287, 288] },
  aarch64: { arch: 0xc00000b7, calls: [217, 218, 219] },
  arm: { arch: 0x40000028, calls: [309, 310, 311] },
};

/** The ABIs a process may use on each Node architecture. */
const ABIS: Partial<Record<NodeJS.Architecture, string[]>> = {
  x64: ['x86_64', 'i386'],
  arm64: ['aarch64', 'arm'],
};

type Instruction = { code: number; jt?: string; jf?: string; k: number; label?: string };

/** The filter as bubblewrap reads it (struct sock_filter[], host byte order), or null on an architecture without one. */
export function keyringFilter(arch: NodeJS.Architecture = process.arch): Buffer | null {
  const abis = ABIS[arch];
  if (!abis) return null;
  const program: Instruction[] = [{ code: LD_W_ABS, k: ARCH }];
  for (const abi of abis) {
    const { arch: audit, calls, mask } = KEYRING_CALLS[abi]!;
    program.push({ code: JEQ_K, k: audit, jf: `not-${abi}` }, { code: LD_W_ABS, k: NR });
    if (mask !== undefined) program.push({ code: ALU_AND_K, k: mask });
    for (const call of calls) program.push({ code: JEQ_K, k: call, jt: 'deny' });
    program.push({ code: RET_K, k: RET_ALLOW });
    // The next ABI's check starts by loading the arch again.
    program.push({ code: LD_W_ABS, k: ARCH, label: `not-${abi}` });
  }
  program.push({ code: RET_K, k: RET_ALLOW }, { code: RET_K, k: RET_EPERM, label: 'deny' });
  return assemble(program);
}

function assemble(program: Instruction[]): Buffer {
  const at = new Map<string, number>();
  program.forEach((op, i) => op.label && at.set(op.label, i));
  const out = Buffer.alloc(program.length * 8);
  const offset = (from: number, label?: string) => {
    if (label === undefined) return 0;
    const to = at.get(label);
    if (to === undefined || to <= from || to - from - 1 > 255) throw new Error(`bad jump to ${label}`);
    return to - from - 1;
  };
  const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  program.forEach((op, i) => {
    const base = i * 8;
    if (littleEndian) {
      out.writeUInt16LE(op.code, base);
      out.writeUInt32LE(op.k >>> 0, base + 4);
    } else {
      out.writeUInt16BE(op.code, base);
      out.writeUInt32BE(op.k >>> 0, base + 4);
    }
    out.writeUInt8(offset(i, op.jt), base + 2);
    out.writeUInt8(offset(i, op.jf), base + 3);
  });
  return out;
}
