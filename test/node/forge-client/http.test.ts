import { inspect } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createForgeClient,
  ForgeHttpError,
  ForgeNetworkError,
  ForgePacingWait,
  ForgeRateLimitError,
  ForgeSchemaError,
  type WritePacer,
} from "../../../src/forge/client/index.ts";
import { FakeForge, json, type Reply } from "./fake-forge.ts";
import { giteaComment, giteaError, giteaIssue, giteaLabel } from "./fixtures/gitea.ts";
import { githubComment, githubError, githubIssue, githubLabel } from "./fixtures/github.ts";
import { makeClient, NOW, rejection, TOKEN } from "./setup.ts";

const R = "/repos/acme/widgets";
const NOW_S = NOW / 1000;

let gh: FakeForge;
let gitea: FakeForge;

beforeAll(async () => {
  gh = await FakeForge.start();
  gitea = await FakeForge.start("/api/v1");
});

afterEach(() => {
  expect(gh.pending()).toEqual([]);
  expect(gitea.pending()).toEqual([]);
  gh.reset();
  gitea.reset();
});

afterAll(async () => {
  await gh.close();
  await gitea.close();
});

function github() {
  return makeClient("github", gh.apiUrl);
}

function forgejo() {
  return makeClient("forgejo", gitea.apiUrl);
}

const badGateway: Reply = {
  status: 502,
  text: "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>",
  headers: { "content-type": "text/html" },
};

describe("retries", () => {
  it("retries a 503 with backoff, then succeeds", async () => {
    gh.on(
      "GET",
      `${R}/issues/7`,
      json(503, githubError(503, "Service Unavailable")),
      json(200, githubIssue(7)),
    );
    const { client, sleeps } = github();

    expect((await client.getIssue(7)).number).toBe(7);
    expect(sleeps).toEqual([500]);
    expect(gh.requests).toHaveLength(2);
  });

  it("gives up after four attempts with the last status and the proxy's status text", async () => {
    gh.on("GET", `${R}/issues/7`, badGateway, badGateway, badGateway, badGateway);
    const { client, sleeps } = github();

    const error = await rejection(client.getIssue(7));

    expect(error).toBeInstanceOf(ForgeHttpError);
    expect(error.message).toBe(`github: GET ${R}/issues/7 returned 502: Bad Gateway`);
    expect(sleeps).toEqual([500, 1000, 2000]);
    expect(gh.requests).toHaveLength(4);
  });

  it("retries a dropped connection", async () => {
    gh.on("GET", `${R}/issues/7`, "drop", json(200, githubIssue(7)));
    const { client, sleeps } = github();

    expect((await client.getIssue(7)).number).toBe(7);
    expect(sleeps).toEqual([500]);
  });

  it("reports a network failure once the attempts are spent", async () => {
    gh.on("GET", `${R}/issues/7`, "drop", "drop", "drop", "drop");
    const { client, sleeps } = github();

    const error = await rejection(client.getIssue(7));

    expect(error).toBeInstanceOf(ForgeNetworkError);
    expect(error.message).toMatch(new RegExp(`^github: GET ${R}/issues/7 failed: TypeError: fetch failed`));
    expect(error.message).not.toContain("\n");
    expect(sleeps).toHaveLength(3);
  });

  it("treats a timeout as a network failure", async () => {
    gh.on("GET", `${R}/issues/7`, "hang", "hang");
    const { client, sleeps } = makeClient("github", gh.apiUrl, { timeoutMs: 50, maxAttempts: 2 });

    const error = await rejection(client.getIssue(7));

    expect(error).toBeInstanceOf(ForgeNetworkError);
    expect(error.message).toMatch(/TimeoutError/);
    expect(sleeps).toEqual([500]);
  });

  it.each([
    [404, githubError(404, "Not Found")],
    [422, githubError(422, "Validation Failed")],
    [401, githubError(401, "Bad credentials")],
  ])("never retries a %i", async (status, body) => {
    gh.on("GET", `${R}/issues/7`, json(status, body));
    const { client, sleeps } = github();

    const error = await rejection(client.getIssue(7));

    expect(error).toBeInstanceOf(ForgeHttpError);
    expect(error).toMatchObject({ status, method: "GET", path: `${R}/issues/7`, forgeMessage: body.message });
    expect(error.message).toBe(`github: GET ${R}/issues/7 returned ${status}: ${body.message}`);
    expect(sleeps).toEqual([]);
    expect(gh.requests).toHaveLength(1);
  });

  it("joins Gitea's validation errors into one line", async () => {
    const invalid = [{ fieldNames: ["Title"], classification: "RequiredError", message: "Required" }];
    gitea.on("POST", `${R}/issues`, json(422, invalid));
    const { client } = forgejo();

    const error = await rejection(client.createIssue({ title: "", body: "", labels: [] }));

    expect(error.message).toBe(`forgejo: POST ${R}/issues returned 422: Required`);
  });

  describe("requests that must not be sent twice (POST)", () => {
    it("are not retried after a 502: the comment may exist already", async () => {
      gh.on("POST", `${R}/issues/7/comments`, badGateway);
      const { client, sleeps } = github();

      await expect(client.comment(7, "hi")).rejects.toMatchObject({ status: 502 });
      expect(sleeps).toEqual([]);
      expect(gh.requests).toHaveLength(1);
    });

    it("are not retried after a dropped connection", async () => {
      gh.on("POST", `${R}/issues/7/comments`, "drop");
      const { client } = github();

      await expect(client.comment(7, "hi")).rejects.toBeInstanceOf(ForgeNetworkError);
      expect(gh.requests).toHaveLength(1);
    });

    it("are retried after a 429, which the forge did not act on", async () => {
      gh.on(
        "POST",
        `${R}/issues/7/comments`,
        json(429, githubError(429, "Too Many Requests"), { "retry-after": "1" }),
        json(201, githubComment(9, "hi")),
      );
      const { client, sleeps } = github();

      expect(await client.comment(7, "hi")).toEqual({ id: 9 });
      expect(sleeps).toEqual([1000]);
    });

    it("are retried after a 503 that says when to come back", async () => {
      gitea.on(
        "POST",
        `${R}/issues/7/comments`,
        json(503, giteaError("maintenance"), { "retry-after": "3" }),
        json(201, giteaComment(10, "hi")),
      );
      const { client, sleeps } = forgejo();

      expect(await client.comment(7, "hi")).toEqual({ id: 10 });
      expect(sleeps).toEqual([3000]);
    });

    it("are retried when marked safe (adding labels twice adds them once)", async () => {
      gh.on("POST", `${R}/issues/7/labels`, badGateway, json(200, [githubLabel(1, "backlog")]));
      const { client, sleeps } = github();

      await client.addLabels(7, ["backlog"]);
      expect(sleeps).toEqual([500]);
    });
  });
});

describe("rate limits", () => {
  it("waits as long as Retry-After says (seconds)", async () => {
    gitea.on(
      "GET",
      `${R}/issues/7`,
      json(429, giteaError("rate limit exceeded"), { "retry-after": "7" }),
      json(200, giteaIssue(7)),
    );
    const { client, sleeps } = forgejo();

    expect((await client.getIssue(7)).number).toBe(7);
    expect(sleeps).toEqual([7000]);
  });

  it("waits until a Retry-After HTTP date", async () => {
    gh.on(
      "GET",
      `${R}/issues/7`,
      json(503, githubError(503, "Unavailable"), { "retry-after": new Date(NOW + 12_000).toUTCString() }),
      json(200, githubIssue(7)),
    );
    const { client, sleeps } = github();

    await client.getIssue(7);
    expect(sleeps).toEqual([12_000]);
  });

  it("waits for GitHub's quota reset on 403 with x-ratelimit-remaining: 0", async () => {
    const headers = {
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-used": "5000",
      "x-ratelimit-reset": String(NOW_S + 30),
      "x-ratelimit-resource": "core",
    };
    const docs = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api";
    gh.on(
      "GET",
      `${R}/issues/7`,
      json(403, githubError(403, "API rate limit exceeded for installation ID 1.", docs), headers),
      json(200, githubIssue(7)),
    );
    const { client, sleeps } = github();

    expect((await client.getIssue(7)).number).toBe(7);
    expect(sleeps).toEqual([30_000]);
  });

  it("waits out a secondary rate limit (403 with Retry-After)", async () => {
    const message =
      "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";
    gh.on(
      "GET",
      `${R}/issues/7`,
      json(403, githubError(403, message), { "retry-after": "60" }),
      json(200, githubIssue(7)),
    );
    const { client, sleeps } = github();

    await client.getIssue(7);
    expect(sleeps).toEqual([60_000]);
  });

  it("honours Gitea-style X-RateLimit-* headers (reset in seconds from now)", async () => {
    gitea.on(
      "GET",
      `${R}/issues/7`,
      json(429, giteaError("rate limited"), { "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "20" }),
      json(200, giteaIssue(7)),
    );
    const { client, sleeps } = forgejo();

    await client.getIssue(7);
    expect(sleeps).toEqual([20_000]);
  });

  it("fails fast, saying when to retry, when the reset is beyond the wait cap", async () => {
    const headers = { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW_S + 3600) };
    gh.on("GET", `${R}/issues/7`, json(403, githubError(403, "API rate limit exceeded"), headers));
    const { client, sleeps } = github();

    const error = await rejection(client.getIssue(7));

    expect(error).toBeInstanceOf(ForgeRateLimitError);
    expect(error).toMatchObject({ status: 403, retryAt: NOW + 3_600_000 });
    expect(error.message).toBe(
      `github: GET ${R}/issues/7 returned 403: API rate limit exceeded; retry after 2026-11-20T11:00:00.000Z (in 3600 s)`,
    );
    expect(sleeps).toEqual([]);
    expect(gh.requests).toHaveLength(1);
  });

  it("fails fast on a Retry-After beyond the cap, and the cap is configurable", async () => {
    gitea.on("GET", `${R}/issues/7`, json(429, giteaError(""), { "retry-after": "11" }));
    const { client, sleeps } = makeClient("gitea", gitea.apiUrl, { maxWaitMs: 10_000 });

    const error = await rejection(client.getIssue(7));

    expect(error).toBeInstanceOf(ForgeRateLimitError);
    expect((error as ForgeRateLimitError).retryAt).toBe(NOW + 11_000);
    expect(sleeps).toEqual([]);
  });

  it("still rate limited after the last attempt: says when to retry", async () => {
    const limited = json(429, githubError(429, "slow down"), { "retry-after": "2" });
    gh.on("GET", `${R}/issues/7`, limited, limited);
    const { client, sleeps } = makeClient("github", gh.apiUrl, { maxAttempts: 2 });

    const error = await rejection(client.getIssue(7));

    expect(error).toBeInstanceOf(ForgeRateLimitError);
    expect((error as ForgeRateLimitError).retryAt).toBe(NOW + 2000);
    expect(sleeps).toEqual([2000]);
  });

  it("does not retry a plain 403", async () => {
    gh.on("GET", `${R}/issues/7`, json(403, githubError(403, "Resource not accessible by integration")));
    const { client, sleeps } = github();

    await expect(client.getIssue(7)).rejects.not.toBeInstanceOf(ForgeRateLimitError);
    expect(sleeps).toEqual([]);
    expect(gh.requests).toHaveLength(1);
  });
});

describe("a token's pacer", () => {
  /** A pacer that says `answers` in turn (null: go) and records what it was asked and told. */
  function pacer(...answers: ({ retryAt: number } | null)[]) {
    const asked: string[] = [];
    const refused: number[] = [];
    const writePacer: WritePacer = {
      beforeWrite: async (kind) => {
        asked.push(kind);
        return answers.shift() ?? null;
      },
      refused: async (until) => {
        refused.push(until);
      },
    };
    return { writePacer, asked, refused };
  }

  it("is asked before each write (a POST creates), never before a read", async () => {
    gh.on("POST", `${R}/issues/7/comments`, json(201, githubComment(1, "hi")));
    gh.on("PATCH", `${R}/issues/7`, json(200, githubIssue(7)));
    gh.on("GET", `${R}/issues/7`, json(200, githubIssue(7)));
    const { writePacer, asked } = pacer();
    const { client } = makeClient("github", gh.apiUrl, { pacer: writePacer });

    await client.comment(7, "hi");
    await client.closeIssue(7);
    await client.getIssue(7);
    expect(asked).toEqual(["create", "write"]);
  });

  it("sends nothing when the pacer says not yet: ForgePacingWait says when", async () => {
    const { writePacer } = pacer({ retryAt: NOW + 30_000 });
    const { client } = makeClient("github", gh.apiUrl, { pacer: writePacer });

    const error = await rejection(client.comment(7, "hi"));
    expect(error).toBeInstanceOf(ForgePacingWait);
    expect(error).toMatchObject({ retryAt: NOW + 30_000 });
    expect(gh.requests).toEqual([]);
  });

  it("reports a secondary rate limit to the pacer and throws at once, not sleeping through it", async () => {
    gh.on(
      "POST",
      `${R}/issues/7/comments`,
      json(403, githubError(403, "You have exceeded a secondary rate limit."), { "retry-after": "90" }),
    );
    const { writePacer, refused } = pacer();
    const { client, sleeps } = makeClient("github", gh.apiUrl, { pacer: writePacer });

    const error = await rejection(client.comment(7, "hi"));
    expect(error).toBeInstanceOf(ForgeRateLimitError);
    expect(error).toMatchObject({ retryAt: NOW + 90_000 });
    expect(refused).toEqual([NOW + 90_000]);
    expect(sleeps).toEqual([]);
  });

  it("waits a minute on a secondary rate limit that names no wait (its message says so)", async () => {
    gh.on(
      "POST",
      `${R}/issues/7/comments`,
      json(
        403,
        githubError(403, "You have exceeded a secondary rate limit and have been temporarily blocked."),
      ),
    );
    const { writePacer, refused } = pacer();
    const { client } = makeClient("github", gh.apiUrl, { pacer: writePacer });

    const error = await rejection(client.comment(7, "hi"));
    expect(error).toMatchObject({ retryAt: NOW + 60_000 });
    expect(refused).toEqual([NOW + 60_000]);
  });
});

describe("schema failures", () => {
  it("name the endpoint and the zod path, and are not retried", async () => {
    const broken = { ...githubIssue(7), number: "7", labels: [{ ...githubLabel(1, "backlog"), name: 5 }] };
    gh.on("GET", `${R}/issues/7`, json(200, broken));
    const { client } = github();

    const error = await rejection(client.getIssue(7));

    expect(error).toBeInstanceOf(ForgeSchemaError);
    expect(error.message).toMatch(new RegExp(`^github: GET ${R}/issues/7: unexpected response: at number: `));
    expect(error.message).toContain("expected number, received string");
    expect(error.message).toContain("at labels.0");
    expect(gh.requests).toHaveLength(1);
  });

  it("catch a 200 that is not JSON (a login page from a proxy)", async () => {
    gitea.on("GET", `${R}/issues/7`, { status: 200, text: "<!DOCTYPE html><title>Sign in</title>" });
    const { client } = forgejo();

    const error = await rejection(client.getIssue(7));

    expect(error).toBeInstanceOf(ForgeSchemaError);
    expect(error.message).toBe(
      `forgejo: GET ${R}/issues/7: response is not JSON: <!DOCTYPE html><title>Sign in</title>`,
    );
  });

  it("catch a wrong shape inside a paged list", async () => {
    gitea.on("GET", `${R}/labels`, json(200, [giteaLabel(1, "backlog"), { id: "2", name: "blocked" }]));
    const { client } = forgejo();

    const error = await rejection(client.ensureLabels(["backlog"]));

    expect(error).toBeInstanceOf(ForgeSchemaError);
    expect(error.message).toContain(
      `forgejo: GET ${R}/labels?limit=50&page=1: unexpected response: at 1.id:`,
    );
  });
});

describe("the token", () => {
  it("appears in no error, even when the forge echoes it", async () => {
    gh.on("GET", `${R}/issues/1`, json(401, githubError(401, `Bad credentials: Bearer ${TOKEN}`)));
    gh.on("GET", `${R}/issues/2`, json(200, { ...githubIssue(2), title: 42 }));
    gh.on("GET", `${R}/issues/3`, "drop", "drop", "drop", "drop");
    gh.on("GET", `${R}/issues/4`, json(403, githubError(403, TOKEN), { "retry-after": "9999" }));
    gh.on("GET", `${R}/issues/5`, { status: 200, text: `not json ${TOKEN}` });
    gitea.on(
      "GET",
      `${R}/issues/6`,
      { status: 500, text: `panic: token ${TOKEN}` },
      "drop",
      badGateway,
      badGateway,
    );
    const { client } = github();
    const { client: giteaClient } = forgejo();

    const errors = [
      ...(await Promise.all([1, 2, 3, 4, 5].map((n) => rejection(client.getIssue(n))))),
      await rejection(giteaClient.getIssue(6)),
    ];

    expect(errors.map((error) => error.name)).toEqual([
      "ForgeHttpError",
      "ForgeSchemaError",
      "ForgeNetworkError",
      "ForgeRateLimitError",
      "ForgeSchemaError",
      "ForgeHttpError",
    ]);
    expect(errors[0]?.message).toBe(
      `github: GET ${R}/issues/1 returned 401: Bad credentials: Bearer [redacted]`,
    );
    for (const error of errors) {
      for (const text of [error.message, String(error), error.stack ?? "", inspect(error, { depth: 8 })]) {
        expect(text).not.toContain(TOKEN);
      }
      expect(JSON.stringify(error)).not.toContain(TOKEN);
    }
  });
});

describe("createForgeClient", () => {
  it("rejects a repo that is not owner/name", () => {
    for (const repo of [
      "widgets",
      "acme/widgets/extra",
      "acme/",
      " acme/widgets",
      "../x",
      "acme/..",
      "./x",
      "acme/.",
    ]) {
      expect(() => createForgeClient({ forge: "github", apiUrl: gh.apiUrl, repo, token: TOKEN })).toThrow(
        RangeError,
      );
    }
  });

  it("rejects an unknown forge", () => {
    const options = { forge: "gitlab", apiUrl: gh.apiUrl, repo: "a/b", token: TOKEN } as never;
    expect(() => createForgeClient(options)).toThrow("unknown forge: gitlab");
  });

  it("tolerates a trailing slash on the API URL and sends the given user agent", async () => {
    gitea.on("GET", `${R}/issues/7`, json(200, giteaIssue(7)));
    const { client } = makeClient("gitea", `${gitea.apiUrl}/`, {
      userAgent: "conveyor/0.1 (+ops@acme.test)",
    });

    await client.getIssue(7);

    expect(gitea.requests[0]?.path).toBe(`${R}/issues/7`);
    expect(gitea.requests[0]?.headers["user-agent"]).toBe("conveyor/0.1 (+ops@acme.test)");
  });

  it("uses an injected fetch", async () => {
    const urls: string[] = [];
    const { client } = makeClient("github", "https://api.github.com", {
      fetch: async (url) => {
        urls.push(url);
        return new Response(JSON.stringify(githubIssue(7)), {
          headers: { "content-type": "application/json" },
        });
      },
    });

    expect((await client.getIssue(7)).number).toBe(7);
    expect(urls).toEqual([`https://api.github.com${R}/issues/7`]);
  });
});
