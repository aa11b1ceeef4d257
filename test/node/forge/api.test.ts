import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalForge } from "../../support/forge/index.ts";
import { api, Checkout, startForge } from "./harness.ts";

// Gitea API details the production client relies on without showing them: headers, error bodies, status
// codes and the label and merge endpoints' exact behaviour.

const REPO = "acme/raw";
const R = `/repos/${REPO}`;

let forge: LocalForge;
let cleanup: () => Promise<void>;
let workDir: string;
let admin: string;
let writer: string;

beforeAll(async () => {
  ({ forge, workDir, cleanup } = await startForge({ ci: { enabled: false } }));
  await forge.createRepo({ owner: "acme", name: "raw", private: true, seed: { files: { "a.txt": "a\n" } } });
  admin = forge.admin.token;
  writer = forge.createUser("writer").token;
  forge.addCollaborator(REPO, "writer", "write");
});

afterAll(async () => {
  await cleanup();
});

async function call(token: string | null, method: string, path: string, body?: unknown) {
  const response = await api(forge, token, method, path, body);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

describe("Gitea API behaviour", () => {
  it("paginates lists with X-Total-Count and a Link header like Gitea's", async () => {
    for (let i = 1; i <= 5; i++) await call(admin, "POST", `${R}/issues`, { title: `Issue ${i}` });

    const page = await call(admin, "GET", `${R}/issues?state=open&limit=2&page=2`);
    const last = await call(admin, "GET", `${R}/issues?limit=50`);

    expect(page.body.map((issue: { number: number }) => issue.number)).toEqual([3, 2]);
    expect(page.headers.get("x-total-count")).toBe("5");
    const base = `${forge.apiUrl}${R}/issues`;
    expect(page.headers.get("link")).toBe(
      [
        `<${base}?limit=2&page=3&state=open>; rel="next"`,
        `<${base}?limit=2&page=3&state=open>; rel="last"`,
        `<${base}?limit=2&page=1&state=open>; rel="first"`,
        `<${base}?limit=2&page=1&state=open>; rel="prev"`,
      ].join(","),
    );
    expect(last.headers.get("link")).toBeNull();
    expect(last.headers.get("x-total-count")).toBe("5");
  });

  it("drops unknown label names from the issue filter, and with none left lists every issue", async () => {
    const unknown = await call(admin, "GET", `${R}/issues?labels=no-such-label&limit=50`);

    expect(unknown.body).toHaveLength(5);
  });

  it("creates a second label with the same name instead of refusing it", async () => {
    const first = await call(admin, "POST", `${R}/labels`, { name: "dup", color: "#abc" });
    const second = await call(admin, "POST", `${R}/labels`, { name: "dup", color: "00ff00" });
    const bad = await call(admin, "POST", `${R}/labels`, { name: "bad", color: "blue" });

    expect([first.status, second.status]).toEqual([201, 201]);
    expect(first.body).toMatchObject({ name: "dup", color: "aabbcc" });
    expect(second.body.id).not.toBe(first.body.id);
    expect(bad.status).toBe(422);
  });

  it("adds label ids, replaces them, removes one and clears them", async () => {
    const ids = await Promise.all(
      ["x", "y", "z"].map(
        async (name) => (await call(admin, "POST", `${R}/labels`, { name, color: "ededed" })).body.id,
      ),
    );
    const names = (labels: { name: string }[]) => labels.map((label) => label.name);

    expect(
      names((await call(writer, "POST", `${R}/issues/1/labels`, { labels: [ids[0], 99999] })).body),
    ).toEqual(["x"]);
    expect(
      names((await call(writer, "PUT", `${R}/issues/1/labels`, { labels: [ids[1], ids[2]] })).body),
    ).toEqual(["y", "z"]);
    expect((await call(writer, "DELETE", `${R}/issues/1/labels/${ids[1]}`)).status).toBe(204);
    expect((await call(writer, "DELETE", `${R}/issues/1/labels/${ids[1]}`)).status).toBe(204);
    expect((await call(writer, "DELETE", `${R}/issues/1/labels/99999`)).status).toBe(422);
    expect(names((await call(writer, "GET", `${R}/issues/1/labels`)).body)).toEqual(["z"]);
    expect((await call(writer, "DELETE", `${R}/issues/1/labels`)).status).toBe(204);
    expect((await call(writer, "GET", `${R}/issues/1`)).body.labels).toEqual([]);
  });

  it("answers like Gitea for merged, closed and conflicting pull requests", async () => {
    const checkout = await Checkout.clone(forge.cloneUrl(REPO, writer), `${workDir}/raw`);
    await checkout.commitAndPush("topic", { "a.txt": "topic\n" });
    const pull = (await call(writer, "POST", `${R}/pulls`, { head: "topic", base: "main", title: "Topic" }))
      .body;

    expect((await call(writer, "GET", `${R}/pulls/${pull.number}/merge`)).status).toBe(404);
    const merged = await call(writer, "POST", `${R}/pulls/${pull.number}/merge`, { Do: "merge" });
    const again = await call(writer, "POST", `${R}/pulls/${pull.number}/merge`, { Do: "merge" });
    const reopen = await call(writer, "PATCH", `${R}/pulls/${pull.number}`, { state: "open" });

    expect(merged).toMatchObject({ status: 200, body: undefined });
    expect(again).toMatchObject({ status: 405, body: { message: "", url: `${forge.url}/api/swagger` } });
    expect((await call(writer, "GET", `${R}/pulls/${pull.number}/merge`)).status).toBe(204);
    expect(reopen).toMatchObject({
      status: 412,
      body: { message: expect.stringContaining("already merged") },
    });
    const patch = await api(forge, writer, "GET", `${R}/pulls/${pull.number}.patch`);
    expect(await patch.text()).toMatch(/^From [0-9a-f]{40} /);
  });

  it("hides a private repository from strangers and limits who may ask for permissions", async () => {
    const stranger = forge.createUser("stranger").token;
    const reader = forge.createUser("reader").token;
    forge.addCollaborator(REPO, "reader", "read");

    expect(await call(stranger, "GET", R)).toMatchObject({
      status: 404,
      body: { message: "The target couldn't be found.", errors: null },
    });
    expect((await call(reader, "GET", `${R}/collaborators/reader/permission`)).body).toMatchObject({
      permission: "read",
      role_name: "read",
      user: { login: "reader" },
    });
    expect((await call(reader, "GET", `${R}/collaborators/writer/permission`)).status).toBe(403);
    expect((await call(reader, "POST", `${R}/labels`, { name: "nope", color: "ededed" })).status).toBe(403);
    expect((await call(writer, "POST", `${R}/hooks`, { type: "forgejo", config: {} })).status).toBe(403);
  });

  it("validates bodies with Gitea's 422 message and knows its routes", async () => {
    expect(await call(admin, "POST", `${R}/issues`, {})).toMatchObject({
      status: 422,
      body: { message: expect.stringMatching(/^\[title\]: /) },
    });
    expect(
      (await call(admin, "POST", `${R}/hooks`, { type: "slack", config: { url: "x", content_type: "json" } }))
        .body,
    ).toMatchObject({ message: "Invalid hook type" });
    expect((await call(admin, "GET", `${R}/no-such-thing`)).status).toBe(404);
    expect((await call(admin, "DELETE", `${R}/issues`)).status).toBe(405);
    expect((await call(admin, "GET", "/user")).body).toMatchObject({ login: "forge-admin", is_admin: true });
  });
});
