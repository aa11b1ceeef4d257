import { join } from "node:path";
import type { ApiBudget } from "./budget.ts";
import type { Ci } from "./ci/runner.ts";
import type { Listings } from "./listings.ts";
import type { KeyedLock } from "./lock.ts";
import type { ReadFaults } from "./read-faults.ts";
import type { Render } from "./render.ts";
import type { GitHubRender } from "./render-github.ts";
import type { Repo } from "./state.ts";
import type { Store } from "./store.ts";
import type { Deliverer } from "./webhooks/deliver.ts";
import type { WriteLog } from "./write-log.ts";

/** Everything a request handler, a push or a merge works with. */
export interface Forge {
  store: Store;
  render: Render;
  hooks: Deliverer;
  ci: Ci;
  locks: KeyedLock;
  /** GIT_PROJECT_ROOT: `<owner>/<name>.git` below it, lowercased as Gitea stores them. */
  reposDir: string;
  /** Per repository (`owner/name`, lowercased): how long a merge's answer waits after the merge is done. */
  slowMerges: Map<string, number>;
  /** Per repository (lowercased): how many more pull request updates are done but answered 502, as lost. */
  lostUpdates: Map<string, number>;
  /** Per repository (lowercased): for how many reads a pull request is re-checked after its head or base moved. */
  mergeChecks: Map<string, number>;
  /** ETags, 304s and what each request costs. */
  budget: ApiBudget;
  /** Page caps and between-page actions of issue listings (tests). */
  listings: Listings;
  /** GitHub's shapes, for requests from GitHub's client. */
  github: GitHubRender;
  /** Every write per repository, and the refusals a test asked for. */
  writes: WriteLog;
  /** Reads a test makes fail, per repository and path. */
  readFaults: ReadFaults;
}

export function gitDir(reposDir: string, repo: Repo): string {
  return join(reposDir, repo.owner.toLowerCase(), `${repo.name.toLowerCase()}.git`);
}
