import { createForgeClient } from "../../../src/forge/client/index.ts";
import { loopProject, services } from "./review.ts";

/**
 * A GitHub project on the local forge and `count` issues on it, opened by a human through Gitea's API (so
 * neither paced nor counted as Conveyor's), and that human's client.
 */
export async function githubProjectWithIssues(name: string, count: number, settings: object = {}) {
  const loop = await loopProject(name, settings, { kind: "github", forgeCi: false });
  const human = createForgeClient({
    forge: "forgejo",
    apiUrl: services.forgeApiUrl,
    repo: loop.repo,
    token: services.conveyorToken,
  });
  const numbers: number[] = [];
  for (let i = 0; i < count; i++)
    numbers.push((await human.createIssue({ title: `Issue ${i}`, body: "", labels: [] })).number);
  return { loop, human, numbers };
}
