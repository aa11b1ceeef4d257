export interface Page<T> {
  items: T[];
  headers: Headers;
}

const MAX_PAGES = 200;

/**
 * Fetches pages 1, 2, … until the forge says there are no more. Page numbers rather than the URLs in `Link`
 * are followed so that the token never travels to a host the forge names (Gitea builds them from its
 * ROOT_URL, which can differ from the API base behind a proxy).
 */
export async function collectPages<T>(
  pageSize: number,
  fetchPage: (page: number) => Promise<Page<T>>,
): Promise<T[]> {
  const all: T[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { items, headers } = await fetchPage(page);
    all.push(...items);
    if (!hasNextPage(items.length, all.length, pageSize, headers)) return all;
  }
  throw new Error(`pagination: more than ${MAX_PAGES} pages of ${pageSize}; refusing to continue`);
}

/** Whether a page says more follow: `Link` rel="next" where sent, else `X-Total-Count`, else a full page. */
export function hasNextPage(
  received: number,
  collected: number,
  pageSize: number,
  headers: Headers,
): boolean {
  if (received === 0) return false;
  // GitHub and Gitea both send `Link` whenever there is more than one page, with rel="next" unless last.
  const link = headers.get("link");
  if (link !== null) return linkRels(link).includes("next");
  const total = Number(headers.get("x-total-count") ?? Number.NaN);
  if (Number.isFinite(total)) return collected < total;
  return received >= pageSize;
}

/** Every relation named in a `Link` header (`<url>; rel="next", <url>; rel="last"`). */
function linkRels(link: string): string[] {
  return [...link.matchAll(/;\s*rel="?([^";,]+)"?/g)].flatMap((match) =>
    (match[1] ?? "").trim().split(/\s+/),
  );
}

/** One page of a listing by update time, oldest first. `date`: the forge's clock when it answered. */
export type UpdatePage<T> = { items: T[]; more: boolean; date: number | null };

/** A whole listing by update time: its items (repeats included), the first page's clock, where to hold. */
export type UpdateListing<T> = { items: T[]; forgeTime: number | null; heldAt: string | null };

/** How often one listing starts a slid run over before it leaves it to the next listing (`heldAt`). */
const RUN_RESTARTS = 3;

/**
 * Every item updated at or after `since`, paged by key: each page starts at the last item's update time, not
 * at an offset. GitHub sorts `updated asc` but pages by offset, so an item updated mid-listing moves to the
 * end and the next offset page starts one item late: the item that slid onto the page already read would be
 * listed by none. Keyed pages overlap at their boundary (repeats are the caller's to drop).
 *
 * A page whose items all carry the time it started from cannot move the key: the next is taken by offset
 * within that second (a run). An item of a run listed again with a newer time left it mid-listing, so the
 * run's offset pages may have slid past another of its items: the listing starts over from the run's second.
 * After `RUN_RESTARTS` such restarts, `heldAt` names the second the next listing must start from instead.
 */
export async function listByUpdate<T extends { number: number; updatedAt: string }>(
  since: string | null,
  fetchPage: (since: string | null, page: number) => Promise<UpdatePage<T>>,
): Promise<UpdateListing<T>> {
  const items: T[] = [];
  const inRun = new Map<number, string>();
  let heldAt: string | null = null;
  let forgeTime: number | null = null;
  let restarts = 0;
  let key = since;
  let page = 1;
  for (let fetched = 0; fetched < MAX_PAGES; fetched++) {
    const got = await fetchPage(key, page);
    if (fetched === 0) forgeTime = got.date;
    items.push(...got.items);
    const slid = earliest(
      got.items.flatMap((item) => {
        const run = inRun.get(item.number);
        return run !== undefined && Date.parse(item.updatedAt) > Date.parse(run) ? [run] : [];
      }),
    );
    if (slid !== null && restarts < RUN_RESTARTS) {
      restarts++;
      inRun.clear();
      key = slid;
      page = 1;
      continue;
    }
    if (slid !== null) heldAt = earliest([slid, ...(heldAt === null ? [] : [heldAt])]);
    const last = got.items.at(-1);
    if (!got.more || !last) return { items, forgeTime, heldAt };
    if (key !== null && Date.parse(last.updatedAt) === Date.parse(key)) {
      for (const item of got.items) inRun.set(item.number, key);
      page++;
    } else {
      key = last.updatedAt;
      page = 1;
    }
  }
  throw new Error(`pagination: more than ${MAX_PAGES} pages by update time; refusing to continue`);
}

const earliest = (times: string[]): string | null =>
  times.reduce<string | null>((min, t) => (min === null || Date.parse(t) < Date.parse(min) ? t : min), null);
