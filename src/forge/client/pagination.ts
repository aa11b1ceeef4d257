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

function hasNextPage(received: number, collected: number, pageSize: number, headers: Headers): boolean {
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
