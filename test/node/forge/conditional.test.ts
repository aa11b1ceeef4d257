import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CachedAnswer, ConditionalCache, ForgeAnswer } from "../../../src/forge/client/http.ts";
import { createForgeClient } from "../../../src/forge/client/index.ts";
import type { LocalForge } from "../../support/forge/index.ts";
import { startForge } from "./harness.ts";

// Conditional requests against the stand-in: ETags kept by the client, 304s answered from its cache and not
// charged to the token's rate limit, and the listing by update time.

const REPO = "acme/etags";
let forge: LocalForge;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ forge, cleanup } = await startForge({ ci: { enabled: false } }));
  await forge.createRepo({ owner: "acme", name: "etags", seed: { files: { "a.txt": "a\n" } } });
});

afterAll(async () => {
  await cleanup();
});

function client() {
  const answers: ForgeAnswer[] = [];
  const store = new Map<string, CachedAnswer>();
  const conditional: ConditionalCache = { get: (url) => store.get(url), put: (url, a) => store.set(url, a) };
  const forgeClient = createForgeClient({
    forge: "forgejo",
    apiUrl: forge.apiUrl,
    repo: REPO,
    token: forge.admin.token,
    conditional,
    observe: (answer) => answers.push(answer),
  });
  return { forgeClient, answers };
}

describe("conditional requests", () => {
  it("an unchanged listing is a free 304 answered from the cache; a change is a charged 200", async () => {
    const { forgeClient, answers } = client();
    const { number } = await forgeClient.createIssue({ title: "First", body: "", labels: [] });
    const first = await forgeClient.listUpdatedSince(null);
    expect(first.items.map((i) => i.number)).toEqual([number]);
    const before = forge.apiCalls(REPO);

    const again = await forgeClient.listUpdatedSince(null);
    expect(again.items).toEqual(first.items);
    expect(answers.at(-1)?.status).toBe(304);
    // The forge's clock is the 304's own, not the kept answer's.
    expect(again.forgeTime).toBe(Date.parse(answers.at(-1)?.headers.get("date") ?? ""));
    expect(forge.apiCalls(REPO)).toEqual({ charged: before.charged, notModified: before.notModified + 1 });
    // The 304 leaves the rate limit where the last charged answer left it.
    const remaining = (i: number) => Number(answers.at(i)?.headers.get("x-ratelimit-remaining"));
    expect(remaining(-1)).toBe(remaining(-2));

    await forgeClient.comment(number, "news");
    const changed = await forgeClient.listUpdatedSince(null);
    expect(answers.at(-1)?.status).toBe(200);
    expect(changed.items[0]?.comments).toBe(1);
  });

  it("lists issues and pull requests updated at or after `since`", async () => {
    const { forgeClient } = client();
    const { number } = await forgeClient.createIssue({ title: "Later", body: "", labels: [] });
    const [item] = (await forgeClient.listUpdatedSince(null)).items.filter((i) => i.number === number);
    if (!item) throw new Error("not listed");
    const since = await forgeClient.listUpdatedSince(item.updatedAt);
    expect(since.items.map((i) => i.number)).toContain(number);
    const future = new Date(Date.parse(item.updatedAt) + 60_000).toISOString();
    expect((await forgeClient.listUpdatedSince(future)).items).toEqual([]);
  });
});
