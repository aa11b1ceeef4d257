import { describe, expect, it } from "vitest";
import { collectPages, listByUpdate, type Page } from "../../../src/forge/client/pagination.ts";

/** Serves `pages` in order and records which page numbers were asked for. */
function pager(pages: Array<{ items: number[]; headers?: Record<string, string> }>) {
  const asked: number[] = [];
  const fetchPage = async (page: number): Promise<Page<number>> => {
    asked.push(page);
    const served = pages[page - 1] ?? { items: [] };
    return { items: served.items, headers: new Headers(served.headers) };
  };
  return { asked, fetchPage };
}

describe("collectPages", () => {
  it("follows rel=next and stops at a Link without it", async () => {
    const { asked, fetchPage } = pager([
      { items: [1], headers: { link: '<https://x/?page=2>; rel="next", <https://x/?page=3>; rel="last"' } },
      { items: [2], headers: { link: '<https://x/?page=3>; rel="next", <https://x/?page=1>; rel="first"' } },
      { items: [3], headers: { link: '<https://x/?page=2>; rel="prev", <https://x/?page=1>; rel="first"' } },
      { items: [4] },
    ]);

    expect(await collectPages(50, fetchPage)).toEqual([1, 2, 3]);
    expect(asked).toEqual([1, 2, 3]);
  });

  it("does not mistake rel=nextish for next", async () => {
    const { asked, fetchPage } = pager([
      { items: [1], headers: { link: '<https://x/?page=2>; rel="nextish"' } },
    ]);

    await collectPages(1, fetchPage);
    expect(asked).toEqual([1]);
  });

  it("counts against X-Total-Count when there is no Link", async () => {
    const total = { "x-total-count": "3" };
    const { asked, fetchPage } = pager([
      { items: [1, 2], headers: total },
      { items: [3], headers: total },
      { items: [4], headers: total },
    ]);

    expect(await collectPages(2, fetchPage)).toEqual([1, 2, 3]);
    expect(asked).toEqual([1, 2]);
  });

  it("without either header, goes on while pages are full", async () => {
    const { asked, fetchPage } = pager([{ items: [1, 2] }, { items: [3, 4] }, { items: [] }]);

    expect(await collectPages(2, fetchPage)).toEqual([1, 2, 3, 4]);
    expect(asked).toEqual([1, 2, 3]);
  });

  it("stops at an empty page whatever the headers say", async () => {
    const { asked, fetchPage } = pager([{ items: [], headers: { link: '<https://x/?page=2>; rel="next"' } }]);

    expect(await collectPages(2, fetchPage)).toEqual([]);
    expect(asked).toEqual([1]);
  });

  it("refuses to page forever", async () => {
    const endless = async (): Promise<Page<number>> => ({
      items: [1],
      headers: new Headers({ link: '<u>; rel="next"' }),
    });

    await expect(collectPages(1, endless)).rejects.toThrow(/more than 200 pages/);
  });
});

describe("listByUpdate", () => {
  const at = (second: number) => `2026-01-01T00:00:${String(second).padStart(2, "0")}Z`;
  type Entry = { number: number; updatedAt: string };

  /**
   * GitHub's `sort=updated&direction=asc` by offset pages of `size`, over `items`; `between` runs before each
   * page is answered (the forge changing mid-listing).
   */
  function github(items: Entry[], size: number, between: (asked: number) => void = () => {}) {
    const asked: string[] = [];
    const fetchPage = async (since: string | null, page: number) => {
      between(asked.length);
      asked.push(`${since ?? "-"}#${page}`);
      const from = since === null ? Number.NEGATIVE_INFINITY : Date.parse(since);
      const matching = items
        .filter((item) => Date.parse(item.updatedAt) >= from)
        .sort((a, b) => Date.parse(a.updatedAt) - Date.parse(b.updatedAt) || a.number - b.number);
      const slice = matching.slice((page - 1) * size, page * size).map((item) => ({ ...item }));
      return { items: slice, more: page * size < matching.length, date: Date.parse(at(59)) };
    };
    return { asked, fetchPage };
  }
  const update = (items: Entry[], number: number, second: number) => {
    const item = items.find((entry) => entry.number === number);
    if (item) item.updatedAt = new Date(Date.parse(at(0)) + second * 1000).toISOString();
  };

  it("starts each page at the last item's time, so an item updated mid-listing slides past none", async () => {
    const items = [1, 2, 3, 4].map((number) => ({ number, updatedAt: at(number) }));
    // After the first page, #1 is updated and moves to the end: an offset page 2 would start at #4.
    const { asked, fetchPage } = github(items, 2, (n) => n === 1 && update(items, 1, 9));
    const listing = await listByUpdate(null, fetchPage);
    expect(listing.items.map((item) => item.number)).toEqual([1, 2, 2, 3, 3, 4, 4, 1]);
    expect(asked).toEqual([`-#1`, `${at(2)}#1`, `${at(3)}#1`, `${at(4)}#1`]);
    expect(listing).toMatchObject({ forgeTime: Date.parse(at(59)), heldAt: null });
  });

  it("pages by offset within a second that fills a page", async () => {
    const items = [1, 2, 3, 4, 5].map((number) => ({ number, updatedAt: at(number < 5 ? 1 : 2) }));
    const { asked, fetchPage } = github(items, 2);
    const listing = await listByUpdate(at(0), fetchPage);
    expect(new Set(listing.items.map((item) => item.number))).toEqual(new Set([1, 2, 3, 4, 5]));
    expect(asked).toEqual([`${at(0)}#1`, `${at(1)}#1`, `${at(1)}#2`, `${at(1)}#3`]);
  });

  it("starts a run over when one of its items left it mid-listing", async () => {
    const items = [1, 2, 3, 4, 5].map((number) => ({ number, updatedAt: at(1) }));
    // #1 leaves the run after its first offset page: the next offset page would skip #3.
    const { fetchPage } = github(items, 2, (n) => n === 2 && update(items, 1, 9));
    const listing = await listByUpdate(at(0), fetchPage);
    expect(new Set(listing.items.map((item) => item.number))).toEqual(new Set([1, 2, 3, 4, 5]));
    expect(listing.heldAt).toBeNull();
  });

  it("holds the run's second for the next listing when it keeps sliding", async () => {
    // Whenever the run's second page is read, its first item has just left it (listed again, newer).
    const asked: string[] = [];
    const fetchPage = async (since: string | null, page: number) => {
      asked.push(`${since}#${page}`);
      const pages: Record<string, Entry[]> = {
        [`${at(1)}#1`]: [
          { number: 1, updatedAt: at(1) },
          { number: 2, updatedAt: at(1) },
        ],
        [`${at(1)}#2`]: [
          { number: 3, updatedAt: at(1) },
          { number: 1, updatedAt: at(5) },
        ],
        [`${at(5)}#1`]: [{ number: 1, updatedAt: at(5) }],
      };
      const items = pages[`${since}#${page}`] ?? [];
      return { items, more: items.length === 2, date: null };
    };
    const listing = await listByUpdate(at(1), fetchPage);
    expect(listing.heldAt).toBe(at(1));
    // Three starts over, then on to the rest.
    expect(asked.filter((request) => request === `${at(1)}#1`)).toHaveLength(4);
    expect(asked.at(-1)).toBe(`${at(5)}#1`);
  });
});
