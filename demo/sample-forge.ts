/**
 * The local forge with the demo's sample repository, its people and its issues. Started fresh it seeds them;
 * started on an earlier data directory it finds them there and hands out new tokens.
 */
import { createForgeClient, type ForgeClient, type Plain } from "../src/forge/client/index.ts";
import { type LocalForge, startLocalForge } from "../test/support/forge/index.ts";
import { ISSUES, REPO, SAMPLE_REPO_DIR } from "./scenario.ts";

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

export async function startSampleForge(options: { dataDir: string; port?: number }): Promise<SampleForge> {
  const forge = await startLocalForge({ dataDir: options.dataDir, port: options.port ?? 0 });
  const fresh = !forge.repos().includes(REPO);
  const [owner = "", name = ""] = REPO.split("/");
  if (fresh) await forge.createRepo({ owner, name, seed: { dir: SAMPLE_REPO_DIR } });
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
  }
  return { forge, accounts, client };
}
