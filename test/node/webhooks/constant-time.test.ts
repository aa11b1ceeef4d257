import { describe, expect, it } from "vitest";
import { constantTimeEqual } from "../../../src/crypto/constant-time.ts";

const bytes = (...values: number[]) => new Uint8Array(values);

/** Wraps `array` so every indexed read is counted. */
function counting(array: Uint8Array): { view: Uint8Array; reads: () => number } {
  let reads = 0;
  const view = new Proxy(array, {
    get(target, property) {
      if (typeof property === "string" && /^\d+$/.test(property)) reads++;
      return Reflect.get(target, property);
    },
  });
  return { view, reads: () => reads };
}

describe("constantTimeEqual", () => {
  it.each([
    ["both empty", bytes(), bytes()],
    ["one byte", bytes(0), bytes(0)],
    ["several bytes", bytes(1, 2, 255), bytes(1, 2, 255)],
  ])("equal: %s", (_, a, b) => {
    expect(constantTimeEqual(a, b)).toBe(true);
  });

  it.each([
    ["first byte", bytes(0, 2, 3), bytes(1, 2, 3)],
    ["last byte", bytes(1, 2, 3), bytes(1, 2, 4)],
    ["one bit", bytes(0b1000_0000), bytes(0)],
  ])("different, same length: %s", (_, a, b) => {
    expect(constantTimeEqual(a, b)).toBe(false);
  });

  it.each([
    ["empty vs one byte", bytes(), bytes(0)],
    ["prefix", bytes(1, 2), bytes(1, 2, 3)],
    ["longer first", bytes(1, 2, 3, 0), bytes(1, 2, 3)],
    // Zero padding must not make a shorter input equal to a longer one.
    ["trailing zero", bytes(7), bytes(7, 0)],
  ])("different lengths: %s", (_, a, b) => {
    expect(constantTimeEqual(a, b)).toBe(false);
    expect(constantTimeEqual(b, a)).toBe(false);
  });

  it("reads every byte even when the first one differs", () => {
    const a = counting(bytes(0, 2, 3, 4, 5, 6, 7, 8));
    const b = counting(bytes(1, 2, 3, 4, 5, 6, 7, 8));
    expect(constantTimeEqual(a.view, b.view)).toBe(false);
    expect([a.reads(), b.reads()]).toEqual([8, 8]);
  });

  it("runs over the longer input when lengths differ", () => {
    const a = counting(bytes(9));
    const b = counting(bytes(1, 2, 3, 4));
    expect(constantTimeEqual(a.view, b.view)).toBe(false);
    expect(b.reads()).toBe(4);
  });
});
