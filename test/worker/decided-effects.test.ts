/**
 * Effects act on what they were decided on (src/domain/effect-basis.ts): a merge merges only the head that
 * was reviewed, only while the issue is merging. Against the local forge and the Worker's own objects; the
 * reviews are sent as the runner's reviewer would send them (critic.runsOn: runner), so no model is asked.
 */
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { issueStub } from "../../src/issue-stub.ts";
import { projectStub } from "../../src/project-stub.ts";
import { sendEvent } from "../../src/projects/lifecycle-client.ts";
import { loadProject } from "../../src/projects/store.ts";
import { firstPush, type Loop, loopProject, push, send, services, until } from "./support/review.ts";
import { OPERATOR, registerProject } from "./support/webhooks.ts";

const ON_RUNNER = { critic: { runsOn: "runner" } };

/** The project registered again with `token` as Conveyor's forge token (what loopProject registered, else). */
const useToken = (loop: Loop, token: string, settings: object) =>
  registerProject(loop.project, "forgejo", loop.repo, {
    apiUrl: services.forgeApiUrl,
    forgeToken: token,
    ci: { kind: "woodpecker", contextPattern: "ci/woodpecker/*" },
    ...settings,
  });

/** A first push through CI to the critic, whose review (on a runner) is still to come. */
async function reviewing(loop: Loop) {
  const { number, sha } = await firstPush(loop, { "src/parser.ts": "export const parse = 1;\n" });
  const view = await until(loop, number, (v) => v.state === "awaiting_review" && v.outbox.length === 0);
  return { number, sha, pr: view.prNumber ?? 0 };
}

const dropped = async (loop: Loop, number: number) =>
  (await issueStub(env, loop.project, number).view())?.droppedEffects ?? [];

describe("a merge acts only on the head that was reviewed", () => {
  it("a dead-lettered merge sent again after the session pushed a new head is dropped, saying why", async () => {
    const settings = { ...ON_RUNNER, effects: { maxAttempts: 1 } };
    const loop = await loopProject("merge-resent", settings);
    const { number, sha, pr } = await reviewing(loop);
    // Conveyor's token is refused while the approved merge is tried: it goes to the dead letter.
    await useToken(loop, "revoked-token", settings);
    // Sent with the project's settings, its one attempt per effect among them.
    const project = await loadProject(env, loop.project);
    if (!project) throw new Error("not registered");
    const review = { type: "review" as const, verdict: "APPROVE" as const, summary: "Good.", headSha: sha };
    await sendEvent(env, project, number, "review", { kind: "job", id: "reviewer" }, review);
    const failed = await until(loop, number, (v) => v.state === "escalated" && v.outbox.length === 0);
    const letter = failed.deadLetters.find((d) => d.kind === "merge");
    expect(letter?.error).toContain("401");
    await useToken(loop, services.conveyorToken, settings);

    // A human answers; the resumed session pushes a head nobody has reviewed yet.
    await send(loop, number, { type: "human_reply", author: "alice", text: "Handle empty input too." });
    const pushed = await push(loop, number, { "src/parser.ts": "export const parse = 2;\n" });
    await send(loop, number, { type: "dispatched", jobId: "job-resume", runnerId: "runner-1" });
    await send(loop, number, { type: "phase", phase: "awaiting_ci", headSha: pushed, sessionId: "s" });

    const res = await SELF.fetch(
      `https://conveyor.test/api/v1/projects/${loop.project}/issues/${number}/dead-letters/${letter?.id}/redeliver`,
      { method: "POST", headers: OPERATOR },
    );
    expect(res.status).toBe(202);
    await until(loop, number, (v) => !v.outbox.some((o) => o.channel === "effect:merge"));
    expect((await loop.forge.getPullRequest(pr)).merged).toBe(false);
    expect((await dropped(loop, number)).map((d) => [d.kind, d.reason])).toEqual([
      [
        "merge",
        expect.stringMatching(
          new RegExp(
            `^it was decided in merging at ${sha.slice(0, 12)}, and the issue is now in awaiting_(ci|review) at ${pushed.slice(0, 12)}$`,
          ),
        ),
      ],
    ]);
  });

  it("an issue abandoned while its merge waits for the project's merge turn is not merged", async () => {
    const loop = await loopProject("merge-turn-abandoned", ON_RUNNER);
    const { number, sha, pr } = await reviewing(loop);
    // Another issue of the project holds the merge turn.
    const project = projectStub(env, loop.project);
    expect(await project.joinMergeQueue(9_999, 1, 60_000)).toMatchObject({ holds: true });
    await send(loop, number, { type: "review", verdict: "APPROVE", summary: "Good.", headSha: sha });
    const stub = issueStub(env, loop.project, number);
    // Its merge is under way, waiting for the turn, when the operator abandons the issue.
    const delivering = stub.drain();
    await send(loop, number, { type: "abandon", by: "operator" });
    await project.leaveMergeQueue(9_999, 1);
    await delivering;
    const view = await until(loop, number, (v) => !v.outbox.some((o) => o.channel === "effect:merge"));
    expect(view.state).toBe("abandoned");
    expect((await loop.forge.getPullRequest(pr)).merged).toBe(false);
    // Out of the queue too: it holds no turn it will never use.
    await until(loop, number, (v) => !v.outbox.some((o) => o.channel === "effect:leave_merge_queue"));
    expect((await project.mergeQueue()).entries).toEqual([]);
    expect((await dropped(loop, number)).map((d) => [d.kind, d.reason])).toEqual([
      [
        "merge",
        expect.stringMatching(/^it was decided in merging at \w+, and the issue is now in abandoned at/),
      ],
    ]);
  });
});
