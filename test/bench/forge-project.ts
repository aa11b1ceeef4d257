/**
 * A bench's project on the local forge, where the issues' labels and comments land: a forge that refused them
 * would leave every issue retrying in the background, a load that grows with the bench.
 */
import { rm } from "node:fs/promises";
import { tempDir } from "../node/git/support.ts";
import { Operator } from "../node/runner/support/operator.ts";
import { startLocalForge } from "../support/forge/index.ts";

export type BenchProject = {
  operator: Operator;
  /** Opens an issue on the project's repository; its number. */
  issue(title: string): Promise<number>;
  close(): Promise<void>;
};

/**
 * The benches fail the jobs they claim: each failure escalates its issue, whose triage would queue an agent
 * run on the same project, claimed in the place of the bench's next job and load besides the figure.
 */
const NO_TRIAGE = "---\ndescription: Not in benches.\non: [issues.escalated]\nenabled: false\n---\nNo.\n";

/** `project` on the local forge's `acme/widgets`, registered on the Worker at `url` with `settings`. */
export async function benchProject(
  url: string,
  project: string,
  settings: Record<string, unknown> = {},
): Promise<BenchProject> {
  const dataDir = await tempDir(`${project}-forge`);
  const forge = await startLocalForge({ dataDir, ci: { enabled: false } });
  const close = async () => {
    await forge.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const repo = await forge.createRepo({
      owner: "acme",
      name: "widgets",
      seed: { files: { "README.md": "#\n", ".conveyor/agents/triage.md": NO_TRIAGE } },
    });
    const { token } = forge.createUser("conveyor");
    forge.addCollaborator(repo.fullName, "conveyor", "admin");
    const operator = new Operator(url);
    await operator.registerProject(project, repo.cloneUrl, {
      ...settings,
      apiUrl: forge.apiUrl,
      forgeToken: token,
    });
    const issue = async (title: string) => {
      const response = await fetch(`${forge.apiUrl}/repos/acme/widgets/issues`, {
        method: "POST",
        headers: { authorization: `token ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ title, body: "" }),
      });
      if (!response.ok) throw new Error(`forge issue: ${response.status}`);
      return ((await response.json()) as { number: number }).number;
    };
    return { operator, issue, close };
  } catch (error) {
    await close();
    throw error;
  }
}
