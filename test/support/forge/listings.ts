/**
 * Knobs on the issue listing, for tests of clients that page through it while the forge changes: the most
 * items one page holds (a forge's own cap, as Gitea's MAX_RESPONSE_ITEMS) and actions run before a given page
 * is answered, so a change lands between two pages of one listing exactly where a test wants it.
 */
export class Listings {
  private readonly caps = new Map<string, number>();
  private readonly hooks = new Map<string, { page: number; run: () => Promise<void> }[]>();
  private readonly served = new Map<string, number>();

  /** The most items a page of `repo`'s listings holds; 0 lifts the cap. */
  setPageSize(repo: string, size: number): void {
    if (size > 0) this.caps.set(repo.toLowerCase(), size);
    else this.caps.delete(repo.toLowerCase());
  }

  pageSize(repo: string): number {
    return this.caps.get(repo.toLowerCase()) ?? Number.POSITIVE_INFINITY;
  }

  /** Runs `action` when the `page`-th issue listing page from now is asked for, before it is answered. */
  before(repo: string, page: number, action: () => Promise<void>): void {
    const key = repo.toLowerCase();
    const due = (this.served.get(key) ?? 0) + page;
    this.hooks.set(key, [...(this.hooks.get(key) ?? []), { page: due, run: action }]);
  }

  /** A page of `repo`'s issue listing was asked for: what is due runs first. */
  async arrive(repo: string): Promise<void> {
    const key = repo.toLowerCase();
    const count = (this.served.get(key) ?? 0) + 1;
    this.served.set(key, count);
    const hooks = this.hooks.get(key) ?? [];
    this.hooks.set(
      key,
      hooks.filter((hook) => hook.page !== count),
    );
    for (const hook of hooks.filter((entry) => entry.page === count)) await hook.run();
  }
}
