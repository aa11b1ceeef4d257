/**
 * Which of a project's open issues and pull requests an agent run sees in its prompt, and how: the mirror's
 * whole open backlog (src/projects/mirror.ts) ranked by relevance, then recency, and taken in that order
 * within a token budget: the first with their bodies, then a line each (no body), then only a count, which
 * the agent's `read_backlog` tool pages through. Every entry carries its dates. Pure.
 */
import { shownText } from "../forge/post/hidden.ts";
import type { MirroredIssue } from "../projects/mirrored-issue.ts";
import {
  BACKLOG_PAGE_SIZE,
  type BacklogQuery,
  type BacklogResponse,
} from "../runner-api/backlog-contract.ts";
import type { AgentDefinition } from "./definition.ts";
import type { EventSubject } from "./triggers.ts";

/** An open issue (or pull request) with no change on the forge for this long is stale (the gardener's 4th recipe). */
export const STALE_ISSUE_DAYS = 90;
/** A dependency open this long holds up what waits on it. */
export const STALE_DEPENDENCY_DAYS = 30;
/**
 * The prompt's share for the backlog, in tokens (about four characters each): every turn of the run sends it
 * again, so it grows with the run's budget, `TOKENS_PER_USD` for each dollar, within these bounds.
 */
export const BACKLOG_TOKENS = { min: 4_000, max: 24_000 };
const TOKENS_PER_USD = 8_000;

/** The backlog's token budget of a run whose definition allows it `budgetUsd`. */
export const backlogTokens = (budgetUsd: number): number =>
  Math.round(Math.min(BACKLOG_TOKENS.max, Math.max(BACKLOG_TOKENS.min, budgetUsd * TOKENS_PER_USD)));
/** Of which bodies may take this share; the rest lists what does not fit with a body. */
const BODIES_SHARE = 0.6;
/** A backlog entry's body is cut here (the read tool shows more). */
export const BACKLOG_BODY = 1_500;

const DAY_MS = 86_400_000;

/** An open item as the mirror keeps it, its times in epoch ms. */
export type BacklogRow = Omit<MirroredIssue, "state" | "closedAt">;

/** One entry as the agent reads it (JSON); `body` is absent where the budget left no room for it. */
export type BacklogEntry = {
  number: number;
  kind: "issue" | "pull";
  title: string;
  author: string;
  labels: string[];
  /** The forge's dates (YYYY-MM-DD); null where no source has told the mirror yet. */
  created: string | null;
  updated: string | null;
  /** Whole days since the last change on the forge. */
  idleDays: number | null;
  comments: number;
  dependsOn: number[];
  /** An issue's: the open pull requests that close it. A pull request's: the issues it closes. */
  linked: number[];
  /** Why it is among the first: stale, stale-dependency, subject, your-labels. */
  signals?: string[];
  body?: string;
};

export type Backlog = {
  entries: BacklogEntry[];
  /** Open items the budget left out: the read tool lists them. */
  omitted: number;
  total: number;
};

/** What makes an item relevant to this run: the numbers its event names, the labels its outputs work with. */
export type Focus = { numbers?: ReadonlySet<number>; labels?: ReadonlySet<string> };

/** A run's focus: its event's item and the items its text names (`#12`), the labels its outputs name. */
export function focusOf(outputs: AgentDefinition["outputs"], subject?: EventSubject): Focus {
  const labels = new Set<string>();
  for (const config of Object.values(outputs)) {
    for (const key of ["labels", "allowedLabels", "requiredLabels"] as const) {
      const named = (config as Partial<Record<typeof key, string[]>>)[key];
      for (const label of named ?? []) labels.add(label);
    }
  }
  const numbers = new Set<number>();
  if (subject) {
    numbers.add(subject.number);
    for (const ref of `${"title" in subject ? subject.title : ""}\n${subject.body}`.matchAll(
      /(?<![\w/])#(\d{1,9})\b/g,
    ))
      numbers.add(Number(ref[1]));
  }
  return { numbers, labels };
}

/** The entries of `rows` (a project's open items) this run sees, most relevant first. */
export function chooseBacklog(
  rows: readonly BacklogRow[],
  now: number,
  focus: Focus = {},
  tokens = BACKLOG_TOKENS.max,
): Backlog {
  const entries = backlogEntries(rows, now, focus);
  const ranked = byRelevance(entries);
  const budget = tokens * 4;
  const bodies = budget * BODIES_SHARE;
  let used = 0;
  const chosen: BacklogEntry[] = [];
  for (const entry of ranked) {
    const full = JSON.stringify(entry).length + 1;
    const brief = full - (entry.body === undefined ? 0 : JSON.stringify(entry.body).length + 8);
    if (used + full <= bodies) {
      chosen.push(entry);
      used += full;
    } else if (used + brief <= budget) {
      const { body: _body, ...line } = entry;
      chosen.push(line);
      used += brief;
    } else break;
  }
  return { entries: chosen, omitted: entries.length - chosen.length, total: entries.length };
}

/** The read tool's answer: the entries matching `query`, in its order, one page of them. */
export function searchBacklog(
  rows: readonly BacklogRow[],
  now: number,
  query: BacklogQuery,
): BacklogResponse {
  const words = (query.text ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  const numbers = query.numbers && new Set(query.numbers);
  const matching = backlogEntries(rows, now).filter(
    (entry) =>
      (!query.kind || entry.kind === query.kind) &&
      (!query.label || entry.labels.includes(query.label)) &&
      (!query.stale || (entry.signals ?? []).some((s) => s.startsWith("stale"))) &&
      (!numbers || numbers.has(entry.number)) &&
      words.every((word) => `${entry.title}\n${entry.body ?? ""}`.toLowerCase().includes(word)),
  );
  const idle = (entry: BacklogEntry) => entry.idleDays ?? 0;
  const sorted =
    query.sort === "updated"
      ? matching.sort((a, b) => idle(a) - idle(b) || b.number - a.number)
      : query.sort === "oldest"
        ? matching.sort((a, b) => idle(b) - idle(a) || a.number - b.number)
        : byRelevance(matching);
  const page = query.page ?? 1;
  const start = (page - 1) * BACKLOG_PAGE_SIZE;
  return {
    today: new Date(now).toISOString().slice(0, 10),
    page,
    matching: sorted.length,
    more: start + BACKLOG_PAGE_SIZE < sorted.length,
    items: sorted.slice(start, start + BACKLOG_PAGE_SIZE),
  };
}

const byRelevance = (entries: BacklogEntry[]): BacklogEntry[] =>
  entries
    .map((entry) => ({ entry, score: score(entry) }))
    .sort((a, b) => b.score - a.score || b.entry.number - a.entry.number)
    .map(({ entry }) => entry);

/** Every row as an entry, with its dates, links and signals (the read tool's answer too). */
export function backlogEntries(rows: readonly BacklogRow[], now: number, focus: Focus = {}): BacklogEntry[] {
  const open = new Map(rows.map((row) => [row.number, row]));
  // Issue → the open pull requests that close it.
  const pulls = new Map<number, number[]>();
  // Dependency → whether an open issue waits on it.
  const awaited = new Set<number>();
  for (const row of rows) {
    if (row.kind === "pull")
      for (const n of row.closes ?? []) pulls.set(n, [...(pulls.get(n) ?? []), row.number]);
    else for (const n of row.dependsOn) if (open.has(n)) awaited.add(n);
  }
  return rows.map((row) => {
    const updated = row.forgeUpdatedAt ?? null;
    const created = row.createdAt ?? null;
    const idleDays = updated === null ? null : Math.max(0, Math.floor((now - updated) / DAY_MS));
    const openDays = created === null ? null : Math.floor((now - created) / DAY_MS);
    const signals = [
      ...(idleDays !== null && idleDays >= STALE_ISSUE_DAYS ? ["stale"] : []),
      ...(awaited.has(row.number) && openDays !== null && openDays >= STALE_DEPENDENCY_DAYS
        ? ["stale-dependency"]
        : []),
      ...(focus.numbers?.has(row.number) ? ["subject"] : []),
      ...(row.labels.some((label) => focus.labels?.has(label)) ? ["your-labels"] : []),
    ];
    const kind = row.kind ?? "issue";
    return {
      number: row.number,
      kind,
      title: row.title,
      author: row.author ?? "",
      labels: row.labels,
      created: day(created),
      updated: day(updated),
      idleDays,
      comments: row.comments ?? 0,
      dependsOn: row.dependsOn,
      linked: kind === "pull" ? (row.closes ?? []) : (pulls.get(row.number) ?? []),
      ...(signals.length > 0 && { signals }),
      body: shownText(row.body).slice(0, BACKLOG_BODY),
    };
  });
}

/**
 * The event's own items first, then those carrying the labels the agent works with, then what grooming looks
 * for (stale items and dependencies, open pull requests' linked issues), each tier most recently changed
 * first; an item never dated ranks as changed now (the mirror knew it only from a webhook).
 */
function score(entry: BacklogEntry): number {
  const signals = new Set(entry.signals ?? []);
  const tier =
    (signals.has("subject") ? 8 : 0) +
    (signals.has("your-labels") ? 4 : 0) +
    (signals.has("stale") || signals.has("stale-dependency") ? 2 : 0) +
    (entry.linked.length > 0 || entry.dependsOn.length > 0 ? 1 : 0);
  // Recency within a tier: fresher is higher, never reaching the next tier.
  const recency = 1 / (1 + (entry.idleDays ?? 0));
  return tier + recency * 0.99;
}

const day = (at: number | null) => (at === null ? null : new Date(at).toISOString().slice(0, 10));
