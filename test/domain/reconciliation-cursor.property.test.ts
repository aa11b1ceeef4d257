/**
 * The reconciliation cursor against forges that list as the real ones do, under random interleavings of
 * updates, creations and late writes (a write stamped up to 2 s before it reaches the listing) during
 * multi-page listings: every change is seen by some cycle that starts within two periods of it.
 *
 * The model forges follow their API docs: GitHub's `GET /repos/{o}/{r}/issues?sort=updated&direction=asc&since`
 * (offset pages: an item updated mid-listing moves to the end), Gitea's and Forgejo's (no sort: newest created
 * first, offset pages that grow when an issue is opened mid-listing). Times are whole seconds, `since` is
 * inclusive, and each answer's `Date` is the forge's clock rounded down to the second.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Cursor, changesSince, START } from "../../src/domain/reconciliation.ts";
import { collectPages, listByUpdate } from "../../src/forge/client/pagination.ts";

type Item = { number: number; version: number; stamp: number; created: number };
type Event = { dt: number; create: boolean; pick: number; lag: number };
type Scenario = {
  forge: "github" | "gitea";
  pageSize: number;
  initial: number;
  offset: number;
  events: Event[];
};

const PERIOD_MS = 5_000;
/** How long one page takes to come back: the forge changes meanwhile. */
const PAGE_MS = 250;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const second = (ms: number) => Math.floor(ms / 1000) * 1000;

class ModelForge {
  readonly items = new Map<number, Item>();
  /** Every write: what must be seen, and when it was made. */
  readonly writes: { number: number; version: number; at: number }[] = [];
  private pending: Event[];
  private nextEventAt: number;
  private created = 0;

  constructor(
    public now: number,
    initial: number,
    events: Event[],
  ) {
    for (let i = 0; i < initial; i++) this.write(null, 0);
    this.pending = [...events];
    this.nextEventAt = now + (this.pending[0]?.dt ?? 0);
  }

  get quiet(): boolean {
    return this.pending.length === 0;
  }

  /** Lets time pass, applying the events due meanwhile. */
  advance(to: number): void {
    while (this.pending.length > 0 && this.nextEventAt <= to) {
      const event = this.pending.shift() as Event;
      this.now = this.nextEventAt;
      const numbers = [...this.items.keys()];
      const target =
        event.create || numbers.length === 0 ? null : (numbers[event.pick % numbers.length] ?? null);
      this.write(target, event.lag);
      this.nextEventAt = this.now + (this.pending[0]?.dt ?? 0);
    }
    this.now = Math.max(this.now, to);
  }

  /** A write made now, stamped up to `lag` earlier (it reached the listing that much after its stamp). */
  private write(number: number | null, lag: number): void {
    const known = number === null ? undefined : this.items.get(number);
    const item: Item = known
      ? { ...known, version: known.version + 1, stamp: second(this.now - lag) }
      : { number: this.items.size + 1, version: 1, stamp: second(this.now - lag), created: this.created++ };
    this.items.set(item.number, item);
    this.writes.push({ number: item.number, version: item.version, at: this.now });
  }

  /** One page as the forge answers it, after the time a page takes. */
  page(forge: Scenario["forge"], since: string | null, page: number, size: number) {
    this.advance(this.now + PAGE_MS);
    const from = since === null ? Number.NEGATIVE_INFINITY : Date.parse(since);
    const matching = [...this.items.values()]
      .filter((item) => item.stamp >= from)
      .sort((a, b) =>
        forge === "github" ? a.stamp - b.stamp || a.number - b.number : b.created - a.created,
      );
    const items = matching.slice((page - 1) * size, page * size).map((item) => ({
      number: item.number,
      updatedAt: iso(item.stamp),
      fingerprint: `v${item.version}`,
      version: item.version,
    }));
    return { items, more: page * size < matching.length, date: second(this.now), total: matching.length };
  }
}

/** One cycle as src/reconcile/cycle.ts runs it: the forge client's listing, then the cursor. */
async function cycle(model: ModelForge, scenario: Scenario, cursor: Cursor) {
  const { forge, pageSize } = scenario;
  if (forge === "github") {
    const listing = await listByUpdate(cursor.since, async (since, page) =>
      model.page(forge, since, page, pageSize),
    );
    return changesSince(cursor, listing.items, listing.forgeTime, listing.heldAt);
  }
  let forgeTime: number | null = null;
  const items = await collectPages(pageSize, async (page) => {
    const answer = model.page(forge, cursor.since, page, pageSize);
    if (page === 1) forgeTime = answer.date;
    return { items: answer.items, headers: new Headers({ "x-total-count": String(answer.total) }) };
  });
  return changesSince(cursor, items, forgeTime);
}

async function run(scenario: Scenario) {
  const model = new ModelForge(
    Date.parse("2026-03-01T10:00:00Z") + scenario.offset,
    scenario.initial,
    scenario.events,
  );
  const seen: { number: number; version: number; cycleAt: number }[] = [];
  let cursor = START;
  let cycleAt = model.now;
  // Until two periods after the last event, so every change has had its two periods.
  for (let quietCycles = 0; quietCycles < 3; cycleAt += PERIOD_MS) {
    model.advance(cycleAt);
    const { changed, next } = await cycle(model, scenario, cursor);
    seen.push(...changed.map((item) => ({ number: item.number, version: item.version, cycleAt })));
    cursor = next;
    if (model.quiet) quietCycles++;
  }
  return { writes: model.writes, seen };
}

const scenarios = fc.record({
  forge: fc.constantFrom("github" as const, "gitea" as const),
  pageSize: fc.integer({ min: 1, max: 4 }),
  initial: fc.integer({ min: 0, max: 12 }),
  offset: fc.integer({ min: 0, max: 999 }),
  events: fc.array(
    fc.record({
      // Bursts (several writes during one listing's pages) and pauses (a listing of settled items).
      dt: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 4_000 })),
      create: fc.boolean(),
      pick: fc.nat(),
      lag: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_999 })),
    }),
    { maxLength: 60 },
  ),
});

describe("the reconciliation cursor (property)", () => {
  it("sees every change in some cycle that starts within two periods of it", async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async (scenario) => {
        const { writes, seen } = await run(scenario);
        for (const write of writes) {
          const heard = seen.some(
            (entry) =>
              entry.number === write.number &&
              entry.version >= write.version &&
              entry.cycleAt <= write.at + 2 * PERIOD_MS,
          );
          expect(heard, `#${write.number} v${write.version} written at +${write.at % 100_000} ms`).toBe(true);
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
