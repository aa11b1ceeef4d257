import { describe, expect, it } from "vitest";
import {
  blockUntil,
  FRESH,
  GITHUB_PACING,
  type PacingLimits,
  type PacingState,
  paceWrite,
  writeKind,
} from "../../src/domain/forge-pacing.ts";

const limits: PacingLimits = { creates: [{ count: 3, windowMs: 10_000 }], writeSpacingMs: 0 };

/** Grants one write after another at `now`, waiting as long as it takes, and says when each went. */
function run(
  kind: "create" | "write",
  times: number,
  pacing: PacingLimits,
  now = 0,
  state: PacingState = FRESH,
) {
  const at: number[] = [];
  let current = state;
  for (let i = 0; i < times; i++) {
    const grant = paceWrite(current, kind, now, pacing, Number.POSITIVE_INFINITY);
    if (!grant.go) throw new Error("refused with an unbounded wait");
    at.push(grant.at);
    current = grant.state;
  }
  return { at, state: current };
}

describe("paceWrite", () => {
  it("lets content-creating writes go at once up to the window's count, then as the window frees", () => {
    expect(run("create", 7, limits).at).toEqual([0, 0, 0, 10_000, 10_000, 10_000, 20_000]);
  });

  it("keeps every window: GitHub's 80 a minute and 500 an hour", () => {
    const { at } = run("create", 600, { ...GITHUB_PACING, writeSpacingMs: 0 });
    for (const { count, windowMs } of GITHUB_PACING.creates) {
      for (let i = count; i < at.length; i++)
        expect((at[i] ?? 0) - (at[i - count] ?? 0)).toBeGreaterThanOrEqual(windowMs);
    }
    // The hour's 500 spread over minutes of 80: the 501st waits for the first hour to end.
    expect(at[499]).toBeLessThan(60 * 60_000);
    expect(at[500]).toBe(60 * 60_000);
  });

  it("spaces every write by writeSpacingMs; other writes count against no create window", () => {
    const spaced = { ...limits, writeSpacingMs: 1_000 };
    expect(run("write", 4, spaced, 100_000).at).toEqual([100_000, 101_000, 102_000, 103_000]);
    expect(run("write", 10, limits).state.creates).toEqual([]);
  });

  it("names a later turn without counting it when it is beyond the wait the writer takes", () => {
    const { state } = run("create", 3, limits);
    const later = paceWrite(state, "create", 0, limits, 5_000);
    expect(later).toEqual({ go: false, retryAt: 10_000, state });
    expect(paceWrite(state, "create", 0, limits, 10_000)).toMatchObject({ go: true, at: 10_000 });
  });

  it("holds every write back until the forge's block ends", () => {
    const blocked = blockUntil(FRESH, 30_000);
    expect(paceWrite(blocked, "write", 0, limits, 0)).toMatchObject({ go: false, retryAt: 30_000 });
    expect(paceWrite(blocked, "create", 31_000, limits, 0)).toMatchObject({ go: true, at: 31_000 });
    expect(blockUntil(blocked, 10_000).blockedUntil).toBe(30_000);
  });

  it("forgets writes older than the longest window", () => {
    const { state } = run("create", 3, limits);
    expect(paceWrite(state, "create", 50_000, limits, 0)).toMatchObject({
      go: true,
      at: 50_000,
      state: { creates: [50_000] },
    });
  });
});

describe("writeKind", () => {
  it("counts POSTs as content-creating and other writes as writes; reads are not paced", () => {
    expect(["GET", "POST", "PATCH", "PUT", "DELETE"].map(writeKind)).toEqual([
      null,
      "create",
      "write",
      "write",
      "write",
    ]);
  });
});
