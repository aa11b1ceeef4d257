/**
 * The isolate-wide caches (src/isolate-cache.ts) under Durable Objects that share one isolate, each in an I/O
 * context of its own: an IssueDO's `enqueue_job` takes the project from the cache, then does its own I/O.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { issueStub } from "../../src/issue-stub.ts";
import { cachedProject, forgetProject } from "../../src/projects/cache.ts";
import { freshProject, registerProject } from "./support/webhooks.ts";

/** Issue `number`'s object loads the project, then writes to its own storage. */
const loadIn = (project: string, number: number) =>
  runInDurableObject(issueStub(env, project, number), async (_instance, state) => {
    const registered = await cachedProject(env, project);
    await state.storage.put("loaded", registered?.project.id ?? null);
    return state.storage.get("loaded");
  });

describe("the project cache across Durable Objects", () => {
  it("an object that started loading the project and was reset meanwhile leaves none waiting on its read", async () => {
    const project = freshProject("isolate-cache");
    await registerProject(project, "gitea", "acme/isolate-cache");
    forgetProject(project);
    // Its read in flight, the object is reset (as by an update, or a storage write that failed): the read's
    // I/O context is gone with it. A cache that shared the read's promise left the next object awaiting it
    // for ever.
    const reset = runInDurableObject(issueStub(env, project, 1), async (_instance, state) => {
      void cachedProject(env, project);
      state.abort("reset while loading the project");
    });
    await expect(reset).rejects.toThrow("reset while loading the project");
    expect(await loadIn(project, 2)).toBe(project);
  });

  it("objects loading the project at once each get it and go on with their own I/O", async () => {
    const project = freshProject("isolate-cache-together");
    await registerProject(project, "gitea", "acme/isolate-cache-together");
    forgetProject(project);
    expect(await Promise.all([1, 2, 3].map((n) => loadIn(project, n)))).toEqual([project, project, project]);
  });
});
