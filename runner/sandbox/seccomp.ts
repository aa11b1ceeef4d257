/**
 * The seccomp filter every sandbox runs under (bubblewrap's `--seccomp FD` loads it): a classic-BPF program
 * that refuses the system calls by which one process reaches into another's memory or file descriptors.
 * Everything in a session runs as one uid, so without it the model's commands (and the code under review
 * they run) could take Claude Code's channel to the runner and speak for the session; with it, and with Claude
 * Code non-dumpable (controller.ts), nothing in the sandbox can. Written by hand, without libseccomp: a check
 * of the architecture, then one comparison per refused call.
 */

/** A system call refused, with the error its caller sees. */
type Refused = { name: string; errno: number };

const EPERM = 1;
const ENOSYS = 38;

/**
 * `pidfd_open` answers ENOSYS, as on a kernel without it, so that runtimes that watch their children through
 * pidfds (Bun, libuv) fall back to waitpid; the others answer EPERM, as Yama's `ptrace_scope` would.
 */
const REFUSED: readonly Refused[] = [
  { name: "ptrace", errno: EPERM },
  { name: "process_vm_readv", errno: EPERM },
  { name: "process_vm_writev", errno: EPERM },
  { name: "pidfd_getfd", errno: EPERM },
  { name: "pidfd_open", errno: ENOSYS },
];

type Arch = {
  /** `AUDIT_ARCH_*`: what the kernel reports for a call made with this architecture's calling convention. */
  audit: number;
  numbers: Record<string, number>;
  /** x86-64's x32 calls carry this bit in their number; they are refused whole. */
  x32Bit?: number;
};

/** The architectures Claude Code ships a binary for (linux-x64, linux-arm64). */
const ARCHES: Record<string, Arch> = {
  x64: {
    audit: 0xc000003e,
    numbers: {
      ptrace: 101,
      process_vm_readv: 310,
      process_vm_writev: 311,
      pidfd_open: 434,
      pidfd_getfd: 438,
    },
    x32Bit: 0x40000000,
  },
  arm64: {
    audit: 0xc00000b7,
    numbers: {
      ptrace: 117,
      process_vm_readv: 270,
      process_vm_writev: 271,
      pidfd_open: 434,
      pidfd_getfd: 438,
    },
  },
};

// Classic BPF as seccomp runs it: `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }` over `struct
// seccomp_data { int nr; u32 arch; … }`.
const LD_W_ABS = 0x20;
const JMP_JEQ_K = 0x15;
const JMP_JGE_K = 0x35;
const RET_K = 0x06;
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
export const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;

export type Instruction = { code: number; jt: number; jf: number; k: number };

/**
 * The program for `arch` (Node's `process.arch`). A call made under another architecture's convention (a
 * 32-bit call from a 64-bit process, where the numbers differ) answers ENOSYS: 32-bit programs cannot run
 * in a sandbox.
 */
export function seccompProgram(arch: string = process.arch): Instruction[] {
  const spec = ARCHES[arch];
  if (!spec) throw new Error(`no seccomp filter for the ${arch} architecture (x64 and arm64 only)`);
  const refuse = (errno: number): Instruction => ({ code: RET_K, jt: 0, jf: 0, k: RET_ERRNO | errno });
  const program: Instruction[] = [
    { code: LD_W_ABS, jt: 0, jf: 0, k: OFFSET_ARCH },
    { code: JMP_JEQ_K, jt: 1, jf: 0, k: spec.audit },
    refuse(ENOSYS),
    { code: LD_W_ABS, jt: 0, jf: 0, k: OFFSET_NR },
  ];
  if (spec.x32Bit !== undefined) {
    program.push({ code: JMP_JGE_K, jt: 0, jf: 1, k: spec.x32Bit }, refuse(ENOSYS));
  }
  for (const { name, errno } of REFUSED) {
    const number = spec.numbers[name];
    if (number === undefined) throw new Error(`no number for ${name} on ${arch}`);
    program.push({ code: JMP_JEQ_K, jt: 0, jf: 1, k: number }, refuse(errno));
  }
  program.push({ code: RET_K, jt: 0, jf: 0, k: RET_ALLOW });
  return program;
}

/** The program as bytes, in the machine's order (both architectures are little-endian). */
export function seccompBytes(program: readonly Instruction[] = seccompProgram()): Buffer {
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(({ code, jt, jf, k }, i) => {
    bytes.writeUInt16LE(code, i * 8);
    bytes.writeUInt8(jt, i * 8 + 2);
    bytes.writeUInt8(jf, i * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return bytes;
}

export const SECCOMP_REFUSED: readonly string[] = REFUSED.map((r) => r.name);
