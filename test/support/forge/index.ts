import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { ApiBudget, type ApiCalls } from "./budget.ts";
import { Ci } from "./ci/runner.ts";
import { type Forge, gitDir } from "./forge.ts";
import { commitShape } from "./git/log.ts";
import { branchHeads } from "./git/refs.ts";
import { type ImportedIssue, importIssues } from "./import.ts";
import { Listings } from "./listings.ts";
import { KeyedLock } from "./lock.ts";
import { type ReadFault, ReadFaults } from "./read-faults.ts";
import { Render } from "./render.ts";
import { GitHubRender } from "./render-github.ts";
import { createRepository, ensureUser, type NewRepo, requireRepo } from "./repositories.ts";
import { handleRequest } from "./server.ts";
import type { CiRun, CollaboratorLevel, Delivery, User } from "./state.ts";
import { fullName, Store, setCollaborator } from "./store.ts";
import { Deliverer } from "./webhooks/deliver.ts";
import { type Write, WriteLog } from "./write-log.ts";

export { CI_CONTEXT } from "./ci/runner.ts";
export type { ImportedIssue } from "./import.ts";
export type { ReadFault } from "./read-faults.ts";
export type { NewRepo } from "./repositories.ts";
export type { CiRun, CollaboratorLevel, Delivery } from "./state.ts";
export type { Write } from "./write-log.ts";

export interface LocalForgeOptions {
  /** State file, bare repositories and CI logs; created when missing, reused when present. */
  dataDir: string;
  /** Default 0: any free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The seeded site administrator (default login `forge-admin`); a new `token` is added to its tokens. */
  admin?: { login?: string; token?: string };
  /** Per webhook delivery (Forgejo: 5 s). */
  webhookTimeoutMs?: number;
  /** CI on pull requests (default on) and how long one run may take (default 10 min). */
  ci?: { enabled?: boolean; timeoutMs?: number };
}

export interface CreatedRepo {
  fullName: string;
  cloneUrl: string;
  defaultBranch: string;
  /** Head of the default branch after seeding; null for an empty repository. */
  headSha: string | null;
}

export interface LocalForge {
  /** Web root, e.g. `http://127.0.0.1:41234` (clone URLs are `<url>/<owner>/<name>.git`). */
  readonly url: string;
  /** `<url>/api/v1`: what `createForgeClient({ forge: "forgejo", apiUrl })` takes. */
  readonly apiUrl: string;
  readonly dataDir: string;
  readonly admin: { login: string; token: string };
  /** A user with a new token; `admin: true` makes a site administrator. */
  createUser(login: string, options?: { admin?: boolean; email?: string }): { login: string; token: string };
  /** Another token for an existing user. */
  createToken(login: string): string;
  /** A repository owned by `owner` (created as a user when missing). */
  createRepo(repo: NewRepo): Promise<CreatedRepo>;
  /** `owner/name` of every repository. */
  repos(): string[];
  addCollaborator(repo: string, login: string, level: CollaboratorLevel): void;
  /** The clone URL with `token` as Basic credentials, for plain `git clone` / `git push`. */
  cloneUrl(repo: string, token: string): string;
  /** A commit of `repo` (a sha or a branch): its parents and its message. */
  commit(repo: string, ref: string): Promise<{ parents: string[]; message: string }>;
  /** Every webhook delivery so far, oldest first (`status` null and no `error`: not answered yet). */
  deliveries(): readonly Delivery[];
  /** API requests about `repo`: charged to the rate limit, and answered 304 (free). */
  apiCalls(repo: string): ApiCalls;
  /** Sets how much of its rate limit `login` has used: what the next answers' `X-RateLimit-*` report. */
  spendRateLimit(login: string, used: number): void;
  /** Re-sends a delivery's exact body under a new delivery id; resolves once answered. */
  redeliver(deliveryId: string): Promise<Delivery>;
  ciRuns(): readonly CiRun[];
  /**
   * A merge in `repo` is done (and its webhooks sent) at once, but its answer waits `ms`, as a busy forge's
   * can: what the merge caused may reach a webhook receiver before the merger hears it succeeded. 0 undoes it.
   */
  slowMergeAnswers(repo: string, ms: number): void;
  /**
   * The next `count` pull request updates in `repo` are done (and their webhooks sent), but answered 502, as
   * a gateway answers when the forge behind it acted and its answer was lost.
   */
  loseUpdateAnswers(repo: string, count: number): void;
  /**
   * After a pull request's head or base moves, `repo` re-checks it as Gitea does in the background: its next
   * `reads` reads answer `mergeable: false`, and merges meanwhile are refused. 0 (the default) checks at once.
   */
  mergeCheckReads(repo: string, reads: number): void;
  /** Every write (POST, PATCH, PUT, DELETE) to `repo`, oldest first: when it came, whether it was refused. */
  writesTo(repo: string): Write[];
  /**
   * The next `count` writes to `repo` are refused as GitHub refuses over a secondary rate limit: 403, its
   * message, `Retry-After: retryAfterSeconds`; the write is not done.
   */
  refuseWrites(repo: string, count: number, retryAfterSeconds: number): void;
  /**
   * Every GET of `path` below `repo` (`/pulls/3/reviews`) fails as `fault` says (read-faults.ts) while the
   * rest of the forge answers; null lifts it.
   */
  failReads(repo: string, path: string, fault: ReadFault | null): void;
  /** The most items one page of `repo`'s listings holds (below the forge's own most); 0 lifts the cap. */
  listingPageSize(repo: string, size: number): void;
  /**
   * Runs `action` when the `page`-th page of `repo`'s issue listing from now is asked for, before it is
   * answered: a change between two pages of one listing.
   */
  beforeListingPage(repo: string, page: number, action: () => Promise<void>): void;
  /**
   * Brings in issues with their own authors, times, labels and comments, as Gitea's repository migration does
   * (no webhook): a repository older than the test. Returns their numbers.
   */
  importIssues(repo: string, issues: readonly ImportedIssue[]): number[];
  /** Resolves when no CI run is pending or running and every webhook emitted so far was delivered. */
  settled(): Promise<void>;
  /** Stops listening, cancels CI, waits for deliveries in flight, writes the state. */
  close(): Promise<void>;
}

const DEFAULT_ADMIN = "forge-admin";
const CI_USER = "woodpecker";

export async function startLocalForge(options: LocalForgeOptions): Promise<LocalForge> {
  const dataDir = resolve(options.dataDir);
  const reposDir = join(dataDir, "repos");
  const logsDir = join(dataDir, "ci");
  mkdirSync(reposDir, { recursive: true });
  mkdirSync(logsDir, { recursive: true });

  const store = Store.open(dataDir);
  const admin = ensureUser(store, options.admin?.login ?? DEFAULT_ADMIN, true);
  const adminToken = seedAdminToken(store, admin, options.admin?.token);
  const bot = ensureUser(store, CI_USER, false);
  // Git is the truth about branch heads; pushes made while the forge was down are picked up here.
  for (const repo of store.state.repos) repo.branches = await branchHeads(gitDir(reposDir, repo));

  let forge: Forge | undefined;
  const server = createServer((req, res) => {
    if (forge) void handleRequest(forge, req, res);
  });
  await new Promise<void>((ready, fail) => {
    server.once("error", fail);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", ready);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const render = new Render(store, `http://${host}:${address.port}`);
  const ci = new Ci(store, render, bot, {
    enabled: options.ci?.enabled ?? true,
    timeoutMs: options.ci?.timeoutMs ?? 10 * 60_000,
    reposDir,
    logsDir,
  });
  const hooks = new Deliverer(store, options.webhookTimeoutMs ?? 5_000);
  forge = {
    store,
    render,
    hooks,
    ci,
    locks: new KeyedLock(),
    reposDir,
    slowMerges: new Map(),
    lostUpdates: new Map(),
    mergeChecks: new Map(),
    budget: new ApiBudget(),
    listings: new Listings(),
    writes: new WriteLog(),
    readFaults: new ReadFaults(),
    github: new GitHubRender(store, render.url),
  };
  ci.recover();
  store.save();

  const requireUser = (login: string): User => {
    const user = store.userByLogin(login);
    if (!user) throw new RangeError(`local forge: no user ${login}`);
    return user;
  };

  return {
    url: render.url,
    apiUrl: render.apiUrl,
    dataDir,
    admin: { login: admin.login, token: adminToken },
    createUser(login, userOptions) {
      const user = store.createUser(login, userOptions);
      const token = store.createToken(user);
      store.save();
      return { login: user.login, token };
    },
    createToken(login) {
      const token = store.createToken(requireUser(login));
      store.save();
      return token;
    },
    async createRepo(input) {
      const repo = await createRepository(store, reposDir, input);
      const headSha = repo.branches[repo.defaultBranch] ?? null;
      return {
        fullName: fullName(repo),
        cloneUrl: render.cloneUrl(repo),
        defaultBranch: repo.defaultBranch,
        headSha,
      };
    },
    repos: () => store.state.repos.map(fullName),
    addCollaborator(repo, login, level) {
      setCollaborator(requireRepo(store, repo), requireUser(login), level);
      store.save();
    },
    cloneUrl(repo, token) {
      const url = new URL(render.cloneUrl(requireRepo(store, repo)));
      url.username = "token";
      url.password = token;
      return url.toString();
    },
    commit: (repo, ref) => commitShape(gitDir(reposDir, requireRepo(store, repo)), ref),
    deliveries: () => store.state.deliveries,
    apiCalls: (repo) => forge?.budget.callsFor(repo) ?? { charged: 0, notModified: 0 },
    spendRateLimit: (login, used) => forge?.budget.spend(login, used),
    redeliver: (deliveryId) => hooks.redeliver(deliveryId),
    ciRuns: () => store.state.ciRuns,
    loseUpdateAnswers(repo, count) {
      forge?.lostUpdates.set(fullName(requireRepo(store, repo)).toLowerCase(), count);
    },
    slowMergeAnswers(repo, ms) {
      const key = fullName(requireRepo(store, repo)).toLowerCase();
      if (ms > 0) forge?.slowMerges.set(key, ms);
      else forge?.slowMerges.delete(key);
    },
    mergeCheckReads(repo, reads) {
      const key = fullName(requireRepo(store, repo)).toLowerCase();
      if (reads > 0) forge?.mergeChecks.set(key, reads);
      else forge?.mergeChecks.delete(key);
    },
    writesTo: (repo) => forge?.writes.writes(fullName(requireRepo(store, repo))) ?? [],
    refuseWrites(repo, count, retryAfterSeconds) {
      forge?.writes.refuse(fullName(requireRepo(store, repo)), count, retryAfterSeconds);
    },
    failReads(repo, path, fault) {
      forge?.readFaults.set(fullName(requireRepo(store, repo)), path, fault);
    },
    listingPageSize(repo, size) {
      forge?.listings.setPageSize(fullName(requireRepo(store, repo)), size);
    },
    beforeListingPage(repo, page, action) {
      forge?.listings.before(fullName(requireRepo(store, repo)), page, action);
    },
    importIssues: (repo, issues) => importIssues(store, requireRepo(store, repo), issues),
    async settled() {
      await ci.idle();
      await hooks.idle();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
      await ci.close();
      await hooks.idle();
      store.save();
    },
  };
}

/** The wanted token (added when new), else the admin's first token, else a new one. */
function seedAdminToken(store: Store, admin: User, wanted: string | undefined): string {
  if (wanted === undefined) {
    return store.state.tokens.find((token) => token.userId === admin.id)?.value ?? store.createToken(admin);
  }
  const owner = store.userByToken(wanted);
  if (owner && owner.id !== admin.id)
    throw new RangeError(`local forge: that token belongs to ${owner.login}`);
  return owner ? wanted : store.createToken(admin, wanted);
}
