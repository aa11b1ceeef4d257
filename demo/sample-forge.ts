/**
 * The local forge with the demo's sample repository, its people and its issues (one from before Conveyor, stale
 * for months: STALE_ISSUE). Started fresh it seeds them;
 * started on an earlier data directory it finds them there and hands out new tokens.
 */
import { createForgeClient, type ForgeClient, type Plain } from "../src/forge/client/index.ts";
import { type LocalForge, startLocalForge } from "../test/support/forge/index.ts";
import { ISSUES, REPO, SAMPLE_REPO_DIR, STALE_ISSUE } from "./scenario.ts";

const daysAgo = (days: number) =>
  new Date(Date.now() - days * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "Z");

/** Who acts on the forge: Conveyor's account (API), its runner (git push), and a human maintainer. */
export const PEOPLE = {
  conveyor: { login: "conveyor", level: "admin" },
  runner: { login: "conveyor-runner", level: "write" },
  maintainer: { login: "maintainer", level: "write" },
} as const;

export type Account = { login: string; token: string };

export type SampleForge = {
  forge: LocalForge;
  accounts: { [K in keyof typeof PEOPLE]: Account };
  /** The sample repository as `who` sees it through the production forge client. */
  client(who: Account): ForgeClient<Plain>;
};

/** `ciCommand`: what CI runs instead of the sample's `ci.sh` (a benchmark's instant CI). */
export async function startSampleForge(options: {
  dataDir: string;
  port?: number;
  ciCommand?: string;
}): Promise<SampleForge> {
  const forge = await startLocalForge({ dataDir: options.dataDir, port: options.port ?? 0 });
  const fresh = !forge.repos().includes(REPO);
  const [owner = "", name = ""] = REPO.split("/");
  if (fresh) {
    await forge.createRepo({
      owner,
      name,
      seed: { dir: SAMPLE_REPO_DIR },
      ...(options.ciCommand !== undefined && { ciCommand: options.ciCommand }),
    });
    await squashOnly(forge);
  }
  const account = ({ login, level }: { login: string; level: "admin" | "write" }): Account => {
    if (!fresh) return { login, token: forge.createToken(login) };
    const user = forge.createUser(login);
    forge.addCollaborator(REPO, login, level);
    return user;
  };
  const accounts = {
    conveyor: account(PEOPLE.conveyor),
    runner: account(PEOPLE.runner),
    maintainer: account(PEOPLE.maintainer),
  };
  const client = (who: Account) =>
    createForgeClient({ forge: "forgejo", apiUrl: forge.apiUrl, repo: REPO, token: who.token });
  if (fresh) {
    // Filed by the maintainer, unlabelled: labelling them `backlog` is what hands them to Conveyor.
    const filer = client(accounts.maintainer);
    for (const issue of ISSUES) {
      const { number } = await filer.createIssue({ title: issue.title, body: issue.body, labels: [] });
      if (number !== issue.number) throw new Error(`sample issue "${issue.title}" became #${number}`);
    }
    const { number, title, body, author, idleDays } = STALE_ISSUE;
    const [stale] = forge.importIssues(REPO, [
      { title, body, author, createdAt: daysAgo(idleDays + 30), updatedAt: daysAgo(idleDays), comments: 1 },
    ]);
    if (stale !== number) throw new Error(`the stale issue "${title}" became #${stale}`);
  }
  return { forge, accounts, client };
}

/** The sample allows squash merges only, as many a team's repository does: Conveyor reads that and squashes. */
async function squashOnly(forge: LocalForge): Promise<void> {
  const res = await fetch(`${forge.apiUrl}/repos/${REPO}`, {
    method: "PATCH",
    headers: { authorization: `token ${forge.admin.token}`, "content-type": "application/json" },
    body: JSON.stringify({ allow_merge_commits: false, allow_rebase: false }),
  });
  if (!res.ok) throw new Error(`making ${REPO} squash-only: ${res.status} ${await res.text()}`);
}
