import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { dependencyGraph, dependentsOf, type MirroredIssue, mirrorIssue } from "../../src/projects/mirror.ts";
import { freshProject } from "./support/webhooks.ts";

const issue = (number: number, dependsOn: number[]): MirroredIssue => ({
  number,
  title: `Issue ${number}`,
  body: dependsOn.map((n) => `Depends on #${n}`).join("\n"),
  state: "open",
  labels: [],
  dependsOn,
});

describe("the reverse dependency index follows the mirror", () => {
  it("adds, replaces and clears an issue's edges as its dependencies change", async () => {
    const project = freshProject("deps");
    await mirrorIssue(env, project, issue(5, [1, 2]));
    await mirrorIssue(env, project, issue(6, [2]));
    expect(await dependentsOf(env, project, 2)).toEqual([5, 6]);

    await mirrorIssue(env, project, issue(5, [2, 3]));
    expect(await dependentsOf(env, project, 1)).toEqual([]);
    expect(await dependentsOf(env, project, 3)).toEqual([5]);

    await mirrorIssue(env, project, issue(5, []));
    expect(await dependencyGraph(env, project)).toEqual(new Map([[6, [2]]]));
  });

  it("a delivery already recorded changes neither the issue nor its edges", async () => {
    const project = freshProject("deps-seen");
    const delivery = { id: `${project}:d1`, contentKey: "k1" };
    await env.DB.prepare(
      "INSERT INTO deliveries (id, project_id, content_key, event, number, outcome, received_at) VALUES (?, ?, ?, 'issues', 5, 'processed', 0)",
    )
      .bind(delivery.id, project, delivery.contentKey)
      .run();
    await mirrorIssue(env, project, issue(5, [1]));
    const { seen } = await mirrorIssue(env, project, issue(5, [9]), { delivery });
    expect(seen).toBe("processed");
    expect(await dependencyGraph(env, project)).toEqual(new Map([[5, [1]]]));
  });
});
