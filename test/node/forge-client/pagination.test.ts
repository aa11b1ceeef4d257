import { describe, expect, it } from "vitest";
import { collectPages, type Page } from "../../../src/forge/client/pagination.ts";

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
