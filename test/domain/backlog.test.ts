import { describe, expect, it } from "vitest";
import {
  BACKLOG_BODY,
  type BacklogRow,
  backlogEntries,
  backlogTokens,
  chooseBacklog,
  focusOf,
  STALE_ISSUE_DAYS,
  searchBacklog,
} from "../../src/agents/backlog.ts";
import { BACKLOG_PAGE_SIZE } from "../../src/runner-api/backlog-contract.ts";

const NOW = Date.parse("2026-11-27T12:00:00Z");
const DAY = 86_400_000;

const row = (number: number, idleDays: number, extra: Partial<BacklogRow> = {}): BacklogRow => ({
  number,
  title: `Issue ${number}`,
  body: `Body of ${number}`,
  labels: [],
  dependsOn: [],
  author: "alice",
  comments: 1,
  createdAt: NOW - (idleDays + 10) * DAY,
  forgeUpdatedAt: NOW - idleDays * DAY,
  ...extra,
});

describe("an entry of the backlog", () => {
  it("carries the forge's dates, idle days, and its signals", () => {
    const [entry] = backlogEntries([row(3, STALE_ISSUE_DAYS + 2)], NOW);
    expect(entry).toMatchObject({
      number: 3,
      kind: "issue",
      author: "alice",
      created: "2026-08-17",
      updated: "2026-08-27",
      idleDays: STALE_ISSUE_DAYS + 2,
      signals: ["stale"],
    });
  });

  it("links a pull request and the issues it closes both ways", () => {
    const entries = backlogEntries([row(1, 1), row(2, 1, { kind: "pull", closes: [1] })], NOW);
    expect(entries.map((e) => [e.number, e.linked])).toEqual([
      [1, [2]],
      [2, [1]],
    ]);
  });

  it("marks a dependency open for a month that an open issue waits on", () => {
    const entries = backlogEntries(
      [row(1, 5, { createdAt: NOW - 40 * DAY }), row(2, 1, { dependsOn: [1] })],
      NOW,
    );
    expect(entries[0]?.signals).toEqual(["stale-dependency"]);
    expect(entries[1]?.signals).toBeUndefined();
  });

  it("has no dates where no source told the mirror, and shows bodies as people see them", () => {
    const [entry] = backlogEntries(
      [
        {
          number: 9,
          title: "t",
          body: `a<!-- hidden -->b${"x".repeat(BACKLOG_BODY)}`,
          labels: [],
          dependsOn: [],
        },
      ],
      NOW,
    );
    expect(entry).toMatchObject({ created: null, updated: null, idleDays: null, author: "" });
    expect(entry?.body).not.toContain("hidden");
    expect(entry?.body).toHaveLength(BACKLOG_BODY);
  });
});

describe("the backlog a run sees", () => {
  it("ranks the event's items, then its labels, then stale ones, then the most recent", () => {
    const rows = [
      row(1, 1),
      row(2, 200),
      row(3, 50, { labels: ["prediction/unreviewed"] }),
      row(4, 2),
      row(5, 400),
      row(6, 30),
    ];
    const focus = { numbers: new Set([6]), labels: new Set(["prediction/unreviewed"]) };
    const { entries } = chooseBacklog(rows, NOW, focus);
    expect(entries.map((e) => e.number)).toEqual([6, 3, 2, 5, 1, 4]);
  });

  it("is not cut by number: of 500, the stale oldest-numbered ones come first, all listed within the budget", () => {
    const rows = Array.from({ length: 500 }, (_, i) =>
      row(i + 1, i < 20 ? 120 + i : Math.floor((500 - i) / 10), { body: "y".repeat(400) }),
    );
    const { entries, omitted, total } = chooseBacklog(rows, NOW);
    expect(total).toBe(500);
    expect(entries.slice(0, 20).every((e) => e.signals?.includes("stale"))).toBe(true);
    expect(entries[20]?.number).toBe(500);
    // Bodies for the first, a line for the rest, and what did not fit counted.
    expect(entries[0]?.body).toBeDefined();
    expect(entries.at(-1)?.body).toBeUndefined();
    expect(entries.length + omitted).toBe(500);
  });

  it("stays within its token budget and counts what it left out", () => {
    const rows = Array.from({ length: 300 }, (_, i) =>
      row(i + 1, Math.floor(i / 5), { body: "z".repeat(1_000) }),
    );
    const tokens = 2_000;
    const { entries, omitted } = chooseBacklog(rows, NOW, {}, tokens);
    expect(JSON.stringify(entries).length).toBeLessThanOrEqual(tokens * 4);
    expect(omitted).toBeGreaterThan(0);
    expect(entries.length + omitted).toBe(300);
    // The freshest first (#1–#5 changed today; equals: the newest number).
    expect(entries[0]?.number).toBe(5);
  });
});

describe("read_backlog's answer", () => {
  const rows = [
    row(1, 300, { title: "Unicode slugs", labels: ["bug"] }),
    row(2, 5, { title: "Faster slugs", body: "make slugify fast" }),
    row(3, 120, { kind: "pull", closes: [1], title: "Fix unicode" }),
    ...Array.from({ length: 40 }, (_, i) => row(10 + i, i % 20)),
  ];

  it("narrows by words, label, kind, staleness and numbers", () => {
    const numbers = (query: object) => searchBacklog(rows, NOW, query).items.map((e) => e.number);
    expect(numbers({ text: "SLUGS unicode" })).toEqual([1]);
    expect(numbers({ text: "slugify" })).toEqual([2]);
    expect(numbers({ label: "bug" })).toEqual([1]);
    expect(numbers({ kind: "pull" })).toEqual([3]);
    expect(numbers({ stale: true, sort: "oldest" })).toEqual([1, 3]);
    expect(numbers({ numbers: [2, 3, 99] })).toEqual([3, 2]);
  });

  it("pages, latest updated first or least recently updated first, and says how many match", () => {
    const first = searchBacklog(rows, NOW, { sort: "updated" });
    expect(first).toMatchObject({ today: "2026-11-27", page: 1, matching: 43, more: true });
    expect(first.items).toHaveLength(BACKLOG_PAGE_SIZE);
    expect(first.items[0]?.idleDays).toBe(0);
    const second = searchBacklog(rows, NOW, { sort: "updated", page: 2 });
    expect(second).toMatchObject({ page: 2, more: false });
    expect(second.items.at(-1)?.number).toBe(1);
    expect(searchBacklog(rows, NOW, { sort: "oldest" }).items[0]?.number).toBe(1);
  });
});

describe("a run's backlog budget", () => {
  it("grows with the run's own budget, within bounds", () => {
    expect([0.1, 0.5, 1, 2, 10].map(backlogTokens)).toEqual([4_000, 4_000, 8_000, 16_000, 24_000]);
  });
});

describe("a run's focus", () => {
  it("is the labels its outputs name and the items its event names", () => {
    const focus = focusOf(
      {
        add_labels: { max: 1, dangerous: false, allowedLabels: ["gardener/needs-human"] },
        close_issue: { max: 1, dangerous: false, requiredLabels: ["prediction/unreviewed"] },
      },
      { kind: "issue", number: 7, title: "See #3", body: "and #4, not acme/x#5", labels: [], author: "a" },
    );
    expect([...(focus.labels ?? [])].sort()).toEqual(["gardener/needs-human", "prediction/unreviewed"]);
    expect([...(focus.numbers ?? [])].sort()).toEqual([3, 4, 7]);
  });
});
