/**
 * The sandbox's seccomp program, run by a classic-BPF interpreter over `seccomp_data` as the kernel would:
 * every refused call on each architecture, a sample of the calls everything needs, and calls made under
 * another architecture's convention.
 */
import { describe, expect, it } from "vitest";
import {
  type Instruction,
  RET_ALLOW,
  SECCOMP_REFUSED,
  seccompBytes,
  seccompProgram,
} from "../../../runner/sandbox/seccomp.ts";

const X86_64 = 0xc000003e;
const AARCH64 = 0xc00000b7;
const I386 = 0x40000003;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;

/** The verdict of `program` for one call: the subset of BPF the program may use, and nothing else. */
function run(program: readonly Instruction[], data: { nr: number; arch: number }): number {
  let accumulator = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const { code, jt, jf, k } = program[pc] as Instruction;
    if (code === 0x20) accumulator = k === 0 ? data.nr >>> 0 : k === 4 ? data.arch : Number.NaN;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x35) pc += accumulator >= k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected instruction ${code.toString(16)} at ${pc}`);
  }
  throw new Error("the program fell off its end");
}

const NUMBERS = {
  x64: {
    arch: X86_64,
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    pidfd_open: 434,
    pidfd_getfd: 438,
  },
  arm64: {
    arch: AARCH64,
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    pidfd_open: 434,
    pidfd_getfd: 438,
  },
} as const;
/** read, write, openat, clone, execve, wait4, kill, clone3 (x86-64); read, write, openat, clone, execve, wait4, kill (arm64). */
const EVERYDAY = { x64: [0, 1, 257, 56, 59, 61, 62, 435], arm64: [63, 64, 56, 220, 221, 260, 129] } as const;

describe("the sandbox's seccomp program", () => {
  for (const arch of ["x64", "arm64"] as const) {
    const program = seccompProgram(arch);
    const numbers = NUMBERS[arch];

    it(`refuses reaching into another process on ${arch}, and only that`, () => {
      const verdicts = Object.fromEntries(
        SECCOMP_REFUSED.map((name) => [
          name,
          run(program, { arch: numbers.arch, nr: numbers[name as "ptrace"] }),
        ]),
      );
      expect(verdicts).toEqual({
        ptrace: EPERM,
        process_vm_readv: EPERM,
        process_vm_writev: EPERM,
        pidfd_getfd: EPERM,
        pidfd_open: ENOSYS,
      });
      for (const nr of EVERYDAY[arch]) expect(run(program, { arch: numbers.arch, nr })).toBe(RET_ALLOW);
    });

    it(`answers every call made under another architecture's convention with ENOSYS on ${arch}`, () => {
      const other = arch === "x64" ? AARCH64 : X86_64;
      for (const nr of [0, 1, 26, 101, 117]) {
        expect(run(program, { arch: I386, nr })).toBe(ENOSYS);
        expect(run(program, { arch: other, nr })).toBe(ENOSYS);
      }
    });
  }

  it("refuses x86-64's x32 calls whole (their numbers carry bit 30)", () => {
    const program = seccompProgram("x64");
    for (const nr of [0x40000000, 0x40000000 + 101, 0x40000000 + 539]) {
      expect(run(program, { arch: X86_64, nr })).toBe(ENOSYS);
    }
  });

  it("is refused for an architecture it has no numbers for", () => {
    expect(() => seccompProgram("ia32")).toThrow(/no seccomp filter for the ia32 architecture/);
  });

  it("encodes each instruction as the kernel's 8-byte sock_filter", () => {
    const program = seccompProgram("x64");
    const bytes = seccompBytes(program);
    expect(bytes.length).toBe(program.length * 8);
    expect([bytes.readUInt16LE(0), bytes[2], bytes[3], bytes.readUInt32LE(4)]).toEqual([0x20, 0, 0, 4]);
    expect(bytes.readUInt32LE(bytes.length - 4)).toBe(RET_ALLOW);
  });
});
