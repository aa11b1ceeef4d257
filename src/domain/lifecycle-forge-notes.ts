/**
 * What docs/lifecycle.md says of the forge around the lifecycle: lost webhooks and the forge's limits. Beside
 * lifecycle-diagram.ts, which puts it after the diagrams.
 */
export const FORGE_NOTES = [
  "## Lost webhooks and the forge's limits",
  "",
  "**A lost webhook costs at most one reconciliation period** (`reconcile.periodMs`, a minute by default;",
  "[performance](performance.md#reconciliation)). Each project's object lists what changed on the forge since",
  "its cursor and feeds it through the same lifecycle events the webhooks would have sent, under ids per",
  "occurrence (a close, a reopening and a second close are two events). The cursor never passes a change it",
  "did not list: GitHub's listing is paged by key, not by offset, so an item updated mid-listing slides past",
  "none; the cursor stays behind the forge's own clock at the listing's start less 2 s, so an issue opened",
  "mid-listing (Gitea lists newest first) or a write that reached the listing a moment after its stamp is",
  "listed by the next cycle. When a listing itself slid (many items in one second, one of them changed while",
  "it was paged) and starting over did not settle it, the next cycle lists that second again: two periods",
  "then. A reply on an escalated issue is a comment the forge stamped after the escalation (its moment moved",
  "to the forge's clock by the offset the listing's `Date` shows, less 3 s), whatever D1's copy of the issue",
  "says, and also when the writer answered before Conveyor's notice landed.",
  "",
  "**Writes wait their turn; none fails for the forge's limits.** Every effect that writes to the forge asks",
  "the token's pacer first (GitHub: at most 80 content-creating requests a minute and 500 an hour, a second",
  "between writes, for all projects sharing the token; `forgePacing` sets other limits). A write that must",
  "wait, or that the forge refuses for its rate limit (403 or 429, `retry-after`, `x-ratelimit-reset`), is put",
  "back in its outbox until then without counting an attempt: its lane waits, in order, and it never goes to",
  "the dead letter for that ([performance](performance.md#forge-writes-paced-per-token)).",
  "",
  "**A forge answer is read as its operation documents it.** A list's shape is not an item's: GitHub lists",
  "pull requests without their merge state, so an existing pull request is adopted from the list's shape. Gitea",
  "and Forgejo answer `mergeable: false` while they re-check a pull request (see above): it is read again before",
  "it counts as a conflict.",
  "",
];
