/**
 * The demo's sample project and its issues, each with the path it is designed to take through Conveyor. The
 * scripted model (model-script.ts) plays the sessions and the critic so that exactly these paths happen.
 */

import { DEFAULT_PROTECTED_PATHS } from "../src/domain/protected-paths.ts";

export const PROJECT = "textkit";
export const REPO = "acme/textkit";
export const SAMPLE_REPO_DIR = new URL("./sample-repo/", import.meta.url).pathname;

export type Design = {
  /** `done`: an action issue, closed with its summary (no pull request). */
  state: "merged" | "done";
  /** Sessions: the implement session plus each revision or resumption. */
  iterations: number;
  /** CI results Conveyor acted on (red or green). */
  ciAttempts: number;
  criticRounds: number;
  escalations: number;
};

export type SampleIssue = {
  number: number;
  title: string;
  body: string;
  /** What it shows. */
  story: string;
  design: Design;
  /** What a maintainer answers when the issue's session escalates. */
  reply?: string;
  /** What a maintainer says approving the pull request, when it waits for a human (a protected path). */
  approval?: string;
  /**
   * What the maintainer asks of the pull request as soon as it is opened: a review requesting changes, with a
   * comment on a line. The same session revises; the merge waits until the maintainer approves (`approval`).
   */
  review?: { body: string; path: string; line: number; comment: string };
  /** The maintainer gets to the held pull request only once this issue merged. */
  approveAfter?: number;
  /**
   * An action issue (labelled `action` with `backlog`): it follows this formula from the sample's
   * `.conveyor/formulas/`, and the maintainer approves its dangerous step in the vault with `/conveyor approve`.
   */
  action?: { formula: string };
  /** The maintainer queues the issue only once another reached a state (all others are queued at the start). */
  queueWhen?: { issue: number; state: string };
};

export const ISSUES: readonly SampleIssue[] = [
  {
    number: 1,
    title: "Add slugify(text)",
    body: [
      "Add `slugify(text)` in `src/slugify.js`: lowercase, and every run of characters other than letters and",
      'digits becomes one `-`. `slugify("Hello, World!")` is `"hello-world"`. With tests.',
    ].join("\n"),
    story: "the critic asks for changes, the same session revises, the critic approves",
    design: { state: "merged", iterations: 2, ciAttempts: 2, criticRounds: 2, escalations: 0 },
  },
  {
    number: 2,
    title: "Add slugPath(parts)",
    body: [
      "Add `slugPath(parts)` in `src/slug-path.js`: slugify each part with `slugify` and join them with `/`,",
      'leaving out parts that slugify to nothing. `slugPath(["Blog", "Hello, World!"])` is `"blog/hello-world"`.',
      "",
      "Depends on #1",
    ].join("\n"),
    story:
      "blocked until #1 merges; the maintainer requests changes on a line of its pull request, the same session revises, and the merge waits for the maintainer's approval",
    // Timing decides whether CI's and the critic's first rounds came before the maintainer's review: each is
    // held to at least one and at most these (summary.ts).
    design: { state: "merged", iterations: 2, ciAttempts: 2, criticRounds: 2, escalations: 0 },
    review: {
      body: "One more case before this goes in.",
      path: "src/slug-path.js",
      line: 5,
      comment: 'Take a single string too: `slugPath("Blog")` should be `"blog"`, not a TypeError.',
    },
    approval: "Takes a single string now. Approved.",
  },
  {
    number: 3,
    title: "Add clamp(n, min, max)",
    body: "Add `clamp(n, min, max)` in `src/clamp.js`: `n` limited to the range from `min` to `max`. With tests.",
    story: "CI fails the first push, the same session fixes it",
    design: { state: "merged", iterations: 2, ciAttempts: 2, criticRounds: 1, escalations: 0 },
  },
  {
    number: 4,
    title: "Add formatBytes(n)",
    body: [
      "Add `formatBytes(n)` in `src/format-bytes.js`: a byte count for humans, as shown next to upload limits.",
      "We have not settled the units yet: decimal (1 kB = 1000 B) or binary (1 KiB = 1024 B). Ask a maintainer",
      "before you implement it.",
    ].join("\n"),
    story: "the session escalates, a maintainer replies, the session resumes",
    design: { state: "merged", iterations: 2, ciAttempts: 1, criticRounds: 1, escalations: 1 },
    reply:
      "Binary, please: 1 KiB = 1024 B, with the IEC names (B, KiB, MiB, GiB, TiB) and one decimal above bytes.",
  },
  {
    number: 5,
    title: "Name every test in CI's log",
    body: [
      "CI's log only counts the tests. Make `ci.sh` run `node --test --test-reporter=spec`, so that a failing",
      "run names its test, and say so in the README.",
    ].join("\n"),
    story:
      "changes CI's own script: held for a maintainer, whose approval comes after #6 changed the same README line; the same session resolves the conflict, and the new head is approved again",
    design: { state: "merged", iterations: 2, ciAttempts: 2, criticRounds: 2, escalations: 0 },
    approval: "Checked the new ci.sh: it still runs every test. Approved.",
    approveAfter: 6,
  },
  {
    number: 6,
    title: "Say how to run one test file",
    body: "Say in the README's line about `ci.sh` how to run the tests of one file.",
    story: "queued once #5 waits for its approval, edits the README line #5 edits, merged first",
    design: { state: "merged", iterations: 1, ciAttempts: 1, criticRounds: 1, escalations: 0 },
    queueWhen: { issue: 5, state: "awaiting_approval" },
  },
  {
    number: 7,
    title: "Announce this week's changes",
    body: "Tell the team what was merged this week.\n\nFormula: announce-changes",
    story:
      "an action: its session follows the formula, posts progress, stops at the dangerous step; the vault asks the maintainer, whose /conveyor approve resumes it; closed with a summary, no pull request",
    design: { state: "done", iterations: 2, ciAttempts: 0, criticRounds: 0, escalations: 0 },
    approval: "Checked the list: post it.",
    action: { formula: "announce-changes" },
  },
];

/** The action formula's secret, as the operator registers it (sealed with the project's other secrets). */
export const ANNOUNCE_TOKEN = "demo-announce-token-4c1d9e";

/**
 * Issues a teammate filed and nobody queued: the gardener's to groom. Each with what the gardener does to it:
 * the newer of two duplicates is labelled for a maintainer, the one without acceptance criteria
 * `gardener/underspecified`.
 */
export type GroomedIssue = {
  number: number;
  title: string;
  body: string;
  /** The gardener's comment and label, when it has something to say. */
  gardener?: { comment: string; label: string };
};

/**
 * The sample's history: an issue filed long before Conveyor was connected and untouched for months, brought in
 * with its own author and times (as a repository migration does). The registration's backfill mirrors it, and
 * the gardener asks whether it still matters.
 */
export const STALE_ISSUE: GroomedIssue & { author: string; idleDays: number } = {
  number: 8,
  title: "Slugs for right-to-left text",
  body: "slugify should keep Hebrew and Arabic letters instead of dropping them.",
  author: "former-maintainer",
  idleDays: 200,
  gardener: {
    comment:
      "No activity here for over six months: is this still wanted? If it is, please add an example input and the slug it should give; if not, a maintainer may close it.",
    label: "gardener/needs-human",
  },
};

export const GROOMING: readonly GroomedIssue[] = [
  {
    number: 9,
    title: "Add wordCount(text)",
    body: 'Add `wordCount(text)` in `src/word-count.js`, built on `words`: `wordCount("Hello, big world")` is 3. With tests.',
  },
  {
    number: 10,
    title: "A function that counts words",
    body: "It would be handy to know how many words a text has.",
    gardener: {
      comment:
        "Looks like a duplicate of #9, which asks for the same change with an example. A maintainer, please close one.",
      label: "gardener/needs-human",
    },
  },
  {
    number: 11,
    title: "Make the helpers nicer",
    body: "The helpers could be nicer to use.",
    gardener: {
      comment:
        "What should change, in which helper, and how will we know it is done? Please add acceptance criteria (an example call and its result).",
      label: "gardener/underspecified",
    },
  },
];

/**
 * The gap the planner finds between the sample's VISION.md and its code, filed labelled `vision`: once the
 * maintainer labels it `backlog` it takes the assembly line like the others. Its number is the forge's.
 */
export const PLANNED: Omit<SampleIssue, "number"> = {
  title: "Add truncate(text, max)",
  body: [
    "VISION.md promises truncation for display; textkit has none.",
    "",
    "Add `truncate(text, max)` in `src/truncate.js`: text longer than `max` characters becomes its first",
    '`max - 1` characters and `…`; shorter text is returned as is. `truncate("Hello, World!", 6)` is `"Hello…"`.',
    "With tests.",
  ].join("\n"),
  story: "filed by the planner from VISION.md, labelled backlog by the maintainer, straight through",
  design: { state: "merged", iterations: 1, ciAttempts: 1, criticRounds: 1, escalations: 0 },
};

/** Paths whose change waits for a human: the defaults, and the sample's own CI script. */
export const PROTECTED_PATHS = [...DEFAULT_PROTECTED_PATHS, "ci.sh"];

/** The answer to an escalation no issue was designed for, when the real model runs the sessions. */
export const FALLBACK_REPLY = "Go ahead with the simplest reading of the issue that its tests can pin down.";
