/**
 * A dead letter whose forge recovered (src/domain/escalation.ts): effects given up on while the forge did not
 * answer wait for it instead of escalating; once it answers again they are sent again, once, the issue says
 * so and goes on. Against the local forge behind a proxy that answers 502 while it is "down".
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { LifecycleEvent } from "../../src/domain/lifecycle.ts";
import { sendEvent } from "../../src/projects/lifecycle-client.ts";
import { loadProject } from "../../src/projects/store.ts";
import { type Loop, loopProject, push, services, until } from "./support/review.ts";
import { registerProject } from "./support/webhooks.ts";

/** One attempt per effect: the first 502 makes a dead letter. */
const SETTINGS = { effects: { maxAttempts: 1 } };

/** The project registered again with its forge reached at `apiUrl`. */
const reachForgeAt = (loop: Loop, apiUrl: string) =>
  registerProject(loop.project, "forgejo", loop.repo, {
    apiUrl,
    forgeToken: services.conveyorToken,
    ci: { kind: "woodpecker", contextPattern: "ci/woodpecker/*" },
    ...SETTINGS,
  });

/** Issue `number`'s first session pushed `sha`, told with the project's limits (its one attempt per effect). */
async function firstSession(loop: Loop, number: number, sha: string) {
  const project = await loadProject(env, loop.project);
  if (!project) throw new Error("not registered");
  const events: LifecycleEvent[] = [
    { type: "triage", blockers: [] },
    { type: "dispatched", jobId: `job-${number}-1`, runnerId: "runner-1" },
    { type: "phase", phase: "awaiting_ci", headSha: sha, branch: `conveyor/${number}`, sessionId: "s" },
  ];
  for (const [i, event] of events.entries())
    await sendEvent(env, project, number, `first-${i}`, { kind: "system", id: "test" }, event);
}

describe("a dead letter whose forge recovered", () => {
  it("is sent again automatically, once, saying so, and the issue goes on", async () => {
    const loop = await loopProject("forge-recovers", SETTINGS);
    const { number } = await loop.forge.createIssue({ title: "Parse", body: "x", labels: ["backlog"] });
    const sha = await push(loop, number, { "src/parser.ts": "export const parse = 1;\n" });

    // The forge goes down behind its proxy while the first session ends: opening its pull request fails.
    await reachForgeAt(loop, `${services.controlUrl}/down/api/v1`);
    await firstSession(loop, number, sha);
    const waiting = await until(
      loop,
      number,
      (v) =>
        v.deadLetters.some((d) => d.kind === "open_pull_request") &&
        v.outbox.some((o) => o.channel === "effect:probe_forge" && o.attempts > 0),
    );
    // No human is asked: the issue waits for the forge where it is.
    expect(waiting).toMatchObject({ state: "awaiting_ci", recovering: true, escalation: null });
    expect(waiting.deadLetters.every((d) => d.error.includes("502"))).toBe(true);

    // The forge answers again: what was given up on is sent again, in order, and the pull request opens.
    await reachForgeAt(loop, services.forgeApiUrl);
    const recovered = await until(
      loop,
      number,
      (v) => v.prNumber !== null && !v.recovering && v.deadLetters.length === 0,
      60_000,
    );
    expect(recovered.state).toBe("awaiting_ci");
    expect(recovered.history.map((h) => h.event)).toContain("forge_recovered");
    const pull = await loop.forge.getPullRequest(recovered.prNumber ?? 0);
    expect(pull.headRef).toBe(`conveyor/${number}`);
    await until(loop, number, (v) => v.outbox.every((o) => !o.channel.startsWith("effect:comment")));
    const notices = (await loop.forge.listComments(number)).filter((c) =>
      c.body.startsWith("**Retried automatically.** The forge did not answer"),
    );
    expect(notices).toHaveLength(1);
    expect((await loop.forge.getIssue(number)).labels).toContain(loop.settings.labels.inProgress);
  });
});
