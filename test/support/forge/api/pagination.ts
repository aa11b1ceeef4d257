import type { ApiContext } from "./context.ts";

// Gitea's defaults (DEFAULT_PAGING_NUM, MAX_RESPONSE_ITEMS) and GitHub's (`per_page` 30, at most 100).
const LIMITS = {
  gitea: { param: "limit", byDefault: 30, most: 50 },
  github: { param: "per_page", byDefault: 30, most: 100 },
} as const;

/**
 * One page of `items` by `page` and the dialect's page size (`limit` / `per_page`), at most `cap`. Gitea's
 * headers: `X-Total-Count`, and `Link` (next, last, first, prev, comma-separated, absolute URLs with sorted
 * query) whenever there is more than one page; GitHub's: `Link` (prev, next, last, first, ", "-separated).
 */
export function paginate<T>(
  ctx: ApiContext,
  items: T[],
  cap = Number.POSITIVE_INFINITY,
): { items: T[]; headers: Record<string, string> } {
  const limits = LIMITS[ctx.dialect];
  const page = Math.max(1, Number.parseInt(ctx.query.get("page") ?? "", 10) || 1);
  const asked = Number.parseInt(ctx.query.get(limits.param) ?? "", 10) || 0;
  const limit = Math.min(asked <= 0 ? limits.byDefault : Math.min(asked, limits.most), cap);
  const pages = Math.ceil(items.length / limit);
  const link = (target: number, rel: string) => {
    const query = new URLSearchParams(ctx.query);
    query.set("page", String(target));
    query.sort();
    return `<${ctx.forge.render.url}${ctx.url.pathname}?${query}>; rel="${rel}"`;
  };
  const slice = items.slice((page - 1) * limit, page * limit);
  if (ctx.dialect === "github") {
    const links: string[] = [];
    if (page > 1) links.push(link(Math.min(page - 1, Math.max(pages, 1)), "prev"));
    if (page < pages) links.push(link(page + 1, "next"), link(pages, "last"));
    if (page > 1) links.push(link(1, "first"));
    return { items: slice, headers: links.length > 0 ? { Link: links.join(", ") } : {} };
  }
  const links: string[] = [];
  if (page < pages) links.push(link(page + 1, "next"), link(pages, "last"));
  if (page > 1) links.push(link(1, "first"), link(Math.min(page - 1, Math.max(pages, 1)), "prev"));
  const headers: Record<string, string> = { "X-Total-Count": String(items.length) };
  if (links.length > 0) headers.Link = links.join(",");
  return { items: slice, headers };
}
