import { describe, expect, it } from "vitest";
import {
  feedbackInstructions,
  type ListedReview,
  MAX_FEEDBACK_CHARS,
  REVIEW_STAMP_SLACK_MS,
  reviewsToHear,
  reviewText,
  standingChangeRequests,
  withFeedback,
  withPending,
} from "../../src/domain/human-review.ts";
import {
  DEFAULT_LIMITS,
  type Effect,
  INITIAL_CONTEXT,
  type IssueContext,
  type LifecycleEvent,
  NOT_DISPATCHED,
  type Outcome,
  type State,
  transition,
} from "../../src/domain/lifecycle.ts";
import { sample } from "../support/lifecycle-samples.ts";

const HEAD = "abc1234";

const at = (state: State, patch: Partial<IssueContext> = {}): IssueContext => ({
  ...INITIAL_CONTEXT,
  state,
  iteration: 1,
  sessionId: "sess-1",
  branch: "conveyor/7",
  headSha: HEAD,
  prOpened: true,
  prNumber: 42,
  ...patch,
});

const review = (patch: Partial<Extract<LifecycleEvent, { type: "pr_review" }>> = {}): LifecycleEvent => ({
  ...(sample("pr_review", "awaiting_review") as Extract<LifecycleEvent, { type: "pr_review" }>),
  ...patch,
});

function accepted(outcome: Outcome): Extract<Outcome, { ok: true }> {
  if (!outcome.ok) throw new Error(`rejected: ${outcome.reason}`);
  return outcome;
}

const job = (effects: Effect[]) => effects.find((e) => e.kind === "enqueue_job");

describe("what a review tells the session", () => {
  it("quotes the words, then each line with the end of its hunk", () => {
    const hunk = ["@@ -1,12 +1,12 @@", ...Array.from({ length: 11 }, (_, i) => ` line ${i + 1}`)].join("\n");
    const text = reviewText("alice", "changes_requested", "Not like this.", [
      { path: "src/a.ts", line: 12, hunk, body: "Use a Map here." },
      { path: "README.md", line: null, hunk: "", body: "Say why." },
    ]);
    expect(text).toBe(
      [
        "alice requested changes on the pull request:\n\nNot like this.",
        `On \`src/a.ts\` line 12:\n\`\`\`diff\n${hunk.split("\n").slice(-8).join("\n")}\n\`\`\`\nUse a Map here.`,
        "On `README.md`:\nSay why.",
      ].join("\n\n"),
    );
  });

  it("fences a hunk that holds backticks with a longer fence", () => {
    const text = reviewText("bob", "commented", "", [
      { path: "doc.md", line: 3, hunk: "+```ts\n+x\n+```", body: "Close it." },
    ]);
    expect(text).toContain("````diff\n+```ts\n+x\n+```\n````");
    expect(text.startsWith("bob reviewed the pull request.")).toBe(true);
  });

  it("keeps the newest words within the bound and says what was left out", () => {
    const big = (by: string) => ({ by, text: `${by}: ${"x".repeat(MAX_FEEDBACK_CHARS / 2)}`, round: true });
    const three = [big("a"), big("b"), big("c")];
    const text = feedbackInstructions(three);
    expect(text.startsWith("(2 earlier pieces of feedback left out: too long)")).toBe(true);
    expect(text).toContain("c: x");
    expect(text).not.toContain("b: x");
    expect(
      withPending("Fix CI.", [three[0] ?? big("a")]).startsWith("Fix CI.\n\nMeanwhile, on the pull request:"),
    ).toBe(true);
  });

  it("keeps at most twenty pieces waiting, dropping the oldest", () => {
    let pending = withFeedback(undefined, { by: "a0", text: "t", round: false });
    for (let i = 1; i < 25; i++) pending = withFeedback(pending, { by: `a${i}`, text: "t", round: false });
    expect(pending.map((f) => f.by)).toEqual(Array.from({ length: 20 }, (_, i) => `a${i + 5}`));
  });
});

describe("change requests that hold the merge", () => {
  const r = (id: number, author: string, state: ListedReview["state"], dismissed = false): ListedReview => ({
    id,
    author,
    state,
    dismissed,
  });
  const own = (login: string) => login === "conveyor";

  it("each reviewer's latest approving, rejecting or dismissed review decides; comments change nothing", () => {
    const reviews = [
      r(5, "Alice", "changes_requested"),
      r(6, "alice", "commented"),
      r(3, "bob", "changes_requested"),
      r(7, "bob", "approved"),
      r(8, "carol", "changes_requested", true),
      r(9, "dave", "dismissed"),
      r(10, "erin", "pending"),
      r(11, "conveyor", "changes_requested"),
    ];
    expect(standingChangeRequests(reviews, own)).toEqual([{ by: "Alice", reviewId: 5 }]);
  });

  it("a request /conveyor merge overrode holds no more; a later one does", () => {
    const reviews = [r(5, "alice", "changes_requested")];
    expect(standingChangeRequests(reviews, own, [5])).toEqual([]);
    expect(standingChangeRequests([...reviews, r(12, "alice", "changes_requested")], own, [5])).toEqual([
      { by: "alice", reviewId: 12 },
    ]);
  });
});

describe("reviews a reconciliation cycle hears", () => {
  const SINCE = Date.parse("2026-11-27T12:00:00Z");
  const r = (id: number, author: string, state: ListedReview["state"], at: string | null): ListedReview => ({
    id,
    author,
    state,
    dismissed: state === "dismissed",
    submittedAt: at,
  });
  const own = (login: string) => login === "conveyor";
  const ids = (reviews: ListedReview[]) => reviewsToHear(reviews, own, SINCE).map((review) => review.id);

  it("those stamped since the listing began, less the slack, oldest first; not drafts nor Conveyor's own", () => {
    const slack = new Date(SINCE - REVIEW_STAMP_SLACK_MS).toISOString();
    const justBefore = new Date(SINCE - REVIEW_STAMP_SLACK_MS - 1000).toISOString();
    const reviews = [
      r(9, "alice", "approved", "2026-11-27T12:05:00Z"),
      r(4, "bob", "changes_requested", slack),
      r(3, "carol", "changes_requested", justBefore),
      r(10, "erin", "pending", null),
      r(11, "conveyor", "commented", "2026-11-27T12:06:00Z"),
      r(12, "", "commented", "2026-11-27T12:06:00Z"),
    ];
    expect(ids(reviews)).toEqual([4, 9]);
  });

  it("a dismissed review whatever its stamp (a dismissal keeps it); one without a stamp counts as recent", () => {
    const reviews = [
      r(2, "alice", "dismissed", "2026-01-01T00:00:00Z"),
      { ...r(5, "bob", "changes_requested", "2026-01-01T00:00:00Z"), dismissed: true },
      r(6, "carol", "commented", null),
    ];
    expect(ids(reviews)).toEqual([2, 5, 6]);
  });
});

describe("a writer's review on the pull request", () => {
  it.each(["awaiting_ci", "awaiting_review", "merging"] as const)(
    "in %s stops what waited: the same session revises with the words, a round apart from the critic's",
    (state) => {
      const { next, effects } = accepted(transition(at(state, { criticRounds: 2 }), review()));
      expect(next).toMatchObject({
        state: "revising",
        humanRounds: 1,
        criticRounds: 2,
        iteration: 2,
        sessionId: "sess-1",
        feedback: [],
        job: NOT_DISPATCHED,
      });
      expect(effects).toEqual([
        { kind: "labels", add: ["in_progress"], remove: ["needs_human"] },
        {
          kind: "enqueue_job",
          job: "revise",
          reason: "human",
          detail: "alice requested changes on the pull request:\n\nHandle empty input.",
        },
      ]);
    },
  );

  it("stops a merge held for the vault: its item is withdrawn", () => {
    const { next, effects } = accepted(transition(at("awaiting_approval", { vaultItem: "v3" }), review()));
    expect(next.state).toBe("revising");
    expect(effects).toContainEqual({
      kind: "vault_withdraw",
      itemId: "v3",
      reason: "the issue is revising (pr_review): it no longer waits for the vault",
    });
  });

  it("resumes an escalated session, as a reply does, whatever kind of review it is", () => {
    const { next, effects } = accepted(
      transition(at("escalated"), review({ verdict: "commented", round: false })),
    );
    expect(next.state).toBe("revising");
    expect(job(effects)).toMatchObject({ job: "resume", reason: "human" });
  });

  it("from someone without write access is recorded, not obeyed", () => {
    const text = `visitor requested changes on the pull request:\n\n${"Rewrite it in Rust. ".repeat(20)}`;
    const outcome = transition(at("merging"), review({ writer: false, by: "visitor", text }));
    expect(outcome).toEqual({
      ok: false,
      reason: `shown, not obeyed: visitor has no write access — ${`visitor requested changes on the pull request: ${"Rewrite it in Rust. ".repeat(20)}`.slice(0, 299)}…`,
    });
  });

  it("past max_human_rounds escalates, with the words kept for the reply's round", () => {
    const { next } = accepted(transition(at("awaiting_review", { humanRounds: 5 }), review()));
    expect(next.state).toBe("escalated");
    expect(next.reason).toBe(
      "people on the pull request asked for changes more than 5 times (max_human_rounds 5)",
    );
    const resumed = accepted(
      transition(next, { type: "human_reply", author: "bob", text: "Do what alice says." }),
    );
    expect(job(resumed.effects)).toMatchObject({
      job: "resume",
      detail:
        "bob: Do what alice says.\n\nMeanwhile, on the pull request:\n\nalice requested changes on the pull request:\n\nHandle empty input.",
    });
    expect(resumed.next.feedback).toEqual([]);
  });

  it("while the session works waits, and its round follows the session's push at once", () => {
    const working = at("revising", { job: { id: "job-2", attempt: 1 } });
    const waiting = accepted(transition(working, review()));
    expect(waiting.next.state).toBe("revising");
    expect(waiting.effects).toEqual([]);
    const pushed = accepted(
      transition(waiting.next, { type: "phase", phase: "awaiting_ci", headSha: "def5678", jobId: "job-2" }),
    );
    expect(pushed.next).toMatchObject({
      state: "revising",
      headSha: "def5678",
      humanRounds: 1,
      job: NOT_DISPATCHED,
      feedback: [],
    });
    expect(pushed.effects.map((e) => e.kind)).toEqual(["describe_pull_request", "labels", "enqueue_job"]);
  });

  it("a plain comment waits for the next round, whatever starts it", () => {
    const comment = review({ verdict: "commented", round: false, text: "bob commented:\n\nName it parse." });
    const waiting = accepted(transition(at("awaiting_ci"), comment));
    expect(waiting.next).toMatchObject({ state: "awaiting_ci", feedback: [{ by: "alice", round: false }] });
    const red = accepted(
      transition(waiting.next, { type: "ci", result: "red", headSha: HEAD, excerpt: "1 test failed" }),
    );
    expect(job(red.effects)).toMatchObject({
      job: "revise",
      reason: "ci",
      detail: "1 test failed\n\nMeanwhile, on the pull request:\n\nbob commented:\n\nName it parse.",
    });
    expect(red.next.feedback).toEqual([]);
    // An approval merges without it: it was never asked to start a round.
    const approved = accepted(transition(waiting.next, { type: "ci", result: "green", headSha: HEAD }));
    expect(approved.next.state).toBe("awaiting_review");
  });

  it("an approval or a review before the pull request exists changes nothing", () => {
    expect(accepted(transition(at("awaiting_ci"), review({ verdict: "approved" }))).next.state).toBe(
      "awaiting_ci",
    );
    expect(transition(at("queued", { prOpened: false }), review())).toEqual({
      ok: false,
      reason: "the issue has no pull request yet",
    });
  });
});

describe("a merge held by change requests", () => {
  const holds = [{ by: "alice", reviewId: 11 }];
  const held = () => accepted(transition(at("merging"), { type: "merge_held", holds }));

  it("waits in awaiting_approval, saying who holds it, once per set of reviews", () => {
    const { next, effects } = held();
    expect(next).toMatchObject({ state: "awaiting_approval", heldBy: holds, vaultItem: null });
    const reason =
      "changes requested by alice: the merge waits until they approve the pull request or the review is dismissed, or a writer comments `/conveyor merge`";
    expect(next.reason).toBe(reason);
    expect(effects).toEqual([
      { kind: "labels", add: ["needs_human"], remove: [] },
      { kind: "notify_human", reason },
    ]);
    // Another writer's approval tries the merge again; the same hold found again says nothing new.
    const again = accepted(transition(next, { type: "human_approval", by: "bob", headSha: HEAD }));
    expect(again.next.state).toBe("merging");
    const still = accepted(transition(again.next, { type: "merge_held", holds }));
    expect(still.effects).toEqual([{ kind: "labels", add: ["needs_human"], remove: [] }]);
  });

  it("goes on when the review is dismissed, or a writer says /conveyor merge", () => {
    const dismissed = accepted(transition(held().next, review({ verdict: "dismissed", round: false })));
    expect(dismissed.next.state).toBe("merging");
    expect(dismissed.effects).toEqual([
      { kind: "labels", add: [], remove: ["needs_human"] },
      { kind: "merge" },
    ]);
    const command = accepted(transition(held().next, { type: "merge_command", by: "bob", overrides: [11] }));
    expect(command.next).toMatchObject({ state: "merging", overridden: [11] });
    // Someone else's dismissal does not move it.
    const other = accepted(
      transition(held().next, review({ by: "carol", verdict: "dismissed", round: false })),
    );
    expect(other.next.state).toBe("awaiting_approval");
  });

  it("/conveyor merge anywhere else records what it overrides for the merge to come", () => {
    const { next } = accepted(
      transition(at("revising", { overridden: [3] }), {
        type: "merge_command",
        by: "bob",
        overrides: [3, 11],
      }),
    );
    expect(next).toMatchObject({ state: "revising", overridden: [3, 11] });
  });

  it("a request for changes from the holder starts a round, and the hold is read again after it", () => {
    const { next } = accepted(transition(held().next, review()));
    expect(next).toMatchObject({ state: "revising", heldBy: [], humanRounds: 1 });
  });

  it("is refused with nothing holding it", () => {
    expect(transition(at("merging"), { type: "merge_held", holds: [] })).toEqual({
      ok: false,
      reason: "no change request holds the merge",
    });
  });

  it("a retry starts the count of people's rounds again", () => {
    const { next } = accepted(transition(at("escalated", { humanRounds: 5 }), { type: "retry", by: "bob" }));
    expect(next.humanRounds).toBe(0);
    expect(DEFAULT_LIMITS.maxHumanRounds).toBe(5);
  });
});
