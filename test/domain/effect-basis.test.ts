import { describe, expect, it } from "vitest";
import { type Basis, basisOf, staleEffect } from "../../src/domain/effect-basis.ts";
import { INITIAL_CONTEXT } from "../../src/domain/lifecycle.ts";

const REVIEWED = "aaaa1111aaaa1111";
const PUSHED = "bbbb2222bbbb2222";
const merging: Basis = { state: "merging", headSha: REVIEWED, vaultItem: null };
const now = (state: string, headSha: string | null = REVIEWED, vaultItem: string | null = null) => ({
  state,
  headSha,
  vaultItem,
});

describe("an effect is checked against what it was decided on", () => {
  it("a merge acts only in merging, on the head that was reviewed", () => {
    expect(staleEffect({ kind: "merge" }, merging, now("merging"))).toBeNull();
    // A dead letter sent again after the session pushed a new head: nobody reviewed it.
    expect(staleEffect({ kind: "merge" }, merging, now("awaiting_ci", PUSHED))).toBe(
      "it was decided in merging at aaaa1111aaaa, and the issue is now in awaiting_ci at bbbb2222bbbb",
    );
    // Back in merging on another head: that head's own merge effect merges it, not this one.
    expect(staleEffect({ kind: "merge" }, merging, now("merging", PUSHED))).toMatch(/now in merging at bbbb/);
    // Abandoned while its merge waited for the project's merge turn.
    expect(staleEffect({ kind: "merge" }, merging, now("abandoned"))).toMatch(/now in abandoned/);
  });

  it("the review, CI watch and vault request are bound to their state and head", () => {
    const reviewing: Basis = { state: "awaiting_review", headSha: REVIEWED, vaultItem: null };
    expect(staleEffect({ kind: "request_review" }, reviewing, now("awaiting_review"))).toBeNull();
    expect(staleEffect({ kind: "request_review" }, reviewing, now("awaiting_review", PUSHED))).not.toBeNull();
    const waiting: Basis = { state: "awaiting_ci", headSha: REVIEWED, vaultItem: null };
    expect(staleEffect({ kind: "watch_ci" }, waiting, now("revising"))).not.toBeNull();
    const held: Basis = { state: "awaiting_approval", headSha: REVIEWED, vaultItem: null };
    expect(staleEffect({ kind: "vault_request", reason: "x" }, held, now("awaiting_approval"))).toBeNull();
    expect(staleEffect({ kind: "vault_request", reason: "x" }, held, now("merging"))).not.toBeNull();
  });

  it("a vault approval is bound to its item, a step's request to its step", () => {
    const held: Basis = { state: "awaiting_approval", headSha: REVIEWED, vaultItem: "v1" };
    const approve = { kind: "vault_approve" as const, itemId: "v1", by: "alice" };
    expect(staleEffect(approve, held, now("awaiting_approval", REVIEWED, "v1"))).toBeNull();
    expect(staleEffect(approve, held, now("awaiting_approval", REVIEWED, "v2"))).toBe(
      "it approves vault item v1, and the issue waits on v2",
    );
    const step = { kind: "vault_step" as const, step: "rotate" };
    const asking: Basis = { state: "awaiting_approval", headSha: null, vaultItem: null };
    expect(staleEffect(step, asking, { ...now("awaiting_approval", null), vaultStep: "rotate" })).toBeNull();
    expect(staleEffect(step, asking, { ...now("awaiting_approval", null), vaultStep: "publish" })).toBe(
      "it asks for step rotate, and the issue waits on publish",
    );
  });

  it("effects that say what happened when it happened are never dropped", () => {
    for (const effect of [
      { kind: "labels" as const, add: [], remove: [] },
      { kind: "comment" as const, body: "x" },
      { kind: "close_issue" as const },
      { kind: "enqueue_job" as const, job: "reap" as const },
    ]) {
      expect(staleEffect(effect, merging, now("abandoned", PUSHED))).toBeNull();
    }
  });

  it("a row written before effects carried their basis is held to its kind's state", () => {
    expect(staleEffect({ kind: "merge" }, undefined, now("merging", PUSHED))).toBeNull();
    expect(staleEffect({ kind: "merge" }, undefined, now("awaiting_review"))).toMatch(/decided in merging/);
  });

  it("the basis is the context the edge left", () => {
    const ctx = { ...INITIAL_CONTEXT, state: "merging" as const, headSha: REVIEWED, vaultItem: "v3" };
    expect(basisOf(ctx)).toEqual({ state: "merging", headSha: REVIEWED, vaultItem: "v3" });
  });
});
