import type { ApiContext } from "./context.ts";

// Gitea's defaults: DEFAULT_PAGING_NUM and MAX_RESPONSE_ITEMS.
const DEFAULT_LIMIT = 30;
const MAX_LIMIT = 50;

/**
 * One page of `items` by `page` and `limit`, with Gitea's headers: `X-Total-Count`, and `Link` (next, last,
 * first, prev, comma-separated, absolute URLs with sorted query) whenever there is more than one page.
 */
export function paginate<T>(ctx: ApiContext, items: T[]): { items: T[]; headers: Record<string, string> } {
  const page = Math.max(1, Number.parseInt(ctx.query.get("page") ?? "", 10) || 1);
  const asked = Number.parseInt(ctx.query.get("limit") ?? "", 10) || 0;
  const limit = asked <= 0 ? DEFAULT_LIMIT : Math.min(asked, MAX_LIMIT);
  const pages = Math.ceil(items.length / limit);
  const link = (target: number, rel: string) => {
    const query = new URLSearchParams(ctx.query);
    query.set("page", String(target));
    query.sort();
    return `<${ctx.forge.render.url}${ctx.url.pathname}?${query}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page < pages) links.push(link(page + 1, "next"), link(pages, "last"));
  if (page > 1) links.push(link(1, "first"), link(Math.min(page - 1, Math.max(pages, 1)), "prev"));
  const headers: Record<string, string> = { "X-Total-Count": String(items.length) };
  if (links.length > 0) headers.Link = links.join(",");
  return { items: items.slice((page - 1) * limit, page * limit), headers };
}
