import { createExecutionContext, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type AccessConfig, fetchAccessKeys, verifyAccessJwt } from "../../src/dashboard/access.ts";
import { toBase64url } from "../../src/dashboard/base64url.ts";
import { createSession } from "../../src/dashboard/session.ts";
import { app } from "../../src/index.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { formFields, login, ORIGIN, page, post, seedIssue, sessionCookie } from "./dashboard-support.ts";
import { freshProject } from "./support/webhooks.ts";

describe("sign-in", () => {
  it("sends a visitor without a session to the login form, keeping where they were going", async () => {
    const res = await page("/dashboard/runners");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/login?next=%2Fdashboard%2Frunners");
    const form = await page("/dashboard/login?next=%2Fdashboard%2Frunners");
    expect(form.status).toBe(200);
    expect(form.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await form.text()).toContain('<input type="hidden" name="next" value="/dashboard/runners"/>');
  });

  it("keeps every page behind it, those of approvals, the vault and outcomes too", async () => {
    for (const path of [
      "/dashboard/approvals",
      "/dashboard/vault",
      "/dashboard/outcomes",
      "/dashboard/outcomes.csv",
    ]) {
      const res = await page(path);
      expect([path, res.status]).toEqual([path, 303]);
      expect(res.headers.get("location")).toMatch(/^\/dashboard\/login\?next=/);
    }
  });

  it("refuses a wrong token with 401 and sets no cookie", async () => {
    const res = await login("not-the-token");
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(await res.text()).toContain("That is not the operator token.");
  });

  it("sets an HttpOnly, Secure, SameSite=Strict session cookie that opens the dashboard", async () => {
    const res = await login();
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard");
    const cookie = res.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^conveyor_session=\d+\.[0-9a-f]{32}\.[\w-]{43};/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\/dashboard/);
    const home = await page("/dashboard", cookie.split(";")[0]);
    expect(home.status).toBe(200);
    expect(home.headers.get("cache-control")).toBe("no-store");
    expect(await home.text()).toContain("<h1>Projects</h1>");
  });

  it("follows a dashboard `next` but never one that leaves the dashboard", async () => {
    expect((await login(undefined, "/dashboard/approvals")).headers.get("location")).toBe(
      "/dashboard/approvals",
    );
    expect((await login(undefined, "https://evil.example/")).headers.get("location")).toBe("/dashboard");
    expect((await login(undefined, "//evil.example/dashboard")).headers.get("location")).toBe("/dashboard");
  });

  it("rejects tampered, expired and foreign session cookies", async () => {
    const good = await sessionCookie();
    // The signature's first character: its last one carries two padding bits a decoder may ignore.
    const tampered = good.replace(/\.(.)([^.]*)$/, (_, ch, rest) => `.${ch === "A" ? "B" : "A"}${rest}`);
    const expired = `conveyor_session=${await createSession(env.CONVEYOR_ADMIN_TOKEN ?? "", Date.now() - 13 * 3600_000)}`;
    const foreign = `conveyor_session=${await createSession("another-token")}`;
    for (const cookie of [tampered, expired, foreign, "conveyor_session=garbage"]) {
      const res = await page("/dashboard", cookie);
      expect(res.status, cookie).toBe(303);
      expect(res.headers.get("location")).toMatch(/^\/dashboard\/login/);
    }
  });

  it("signs out: the cookie is cleared", async () => {
    const cookie = await sessionCookie();
    const fields = formFields(await (await page("/dashboard", cookie)).text(), "/dashboard/logout");
    const res = await post("/dashboard/logout", cookie, fields);
    expect(res.status).toBe(303);
    expect(res.headers.get("set-cookie")).toMatch(/^conveyor_session=;.*Max-Age=0/);
  });
});

describe("forms are CSRF-safe", () => {
  const project = freshProject("dash-csrf");
  const action = `/dashboard/projects/${project}/issues/1/actions`;

  async function approvalForm() {
    await seedIssue(project, 1, "awaiting_approval");
    const cookie = await sessionCookie();
    const html = await (await page(`/dashboard/projects/${project}/issues/1`, cookie)).text();
    return { cookie, fields: { ...formFields(html, action), action: "approve" } };
  }

  const stateOf = async () => (await issueStub(env, project, 1).view())?.state;

  it.each([
    ["no CSRF token", (f: Record<string, string>) => ({ ...f, csrf: "" }), {}],
    ["another session's token", (f: Record<string, string>) => ({ ...f, csrf: "x".repeat(43) }), {}],
    ["a cross-site Origin", (f: Record<string, string>) => f, { origin: "https://evil.example" }],
    ["an opaque Origin", (f: Record<string, string>) => f, { origin: "null" }],
  ])("refuses a post with %s (403) and changes nothing", async (_, edit, headers) => {
    const { cookie, fields } = await approvalForm();
    const res = await post(action, cookie, edit(fields), headers);
    expect(res.status).toBe(403);
    expect(await stateOf()).toBe("awaiting_approval");
  });

  it.each(["cross-site", "same-site"])(
    "refuses a post without Origin from %s (Sec-Fetch-Site)",
    async (site) => {
      const { cookie, fields } = await approvalForm();
      const res = await postWithoutOrigin(action, cookie, fields, { "sec-fetch-site": site });
      expect(res.status).toBe(403);
      expect(await stateOf()).toBe("awaiting_approval");
    },
  );

  it("refuses a post without a session even with a valid-looking form", async () => {
    const { fields } = await approvalForm();
    const res = await post(action, "conveyor_session=none", fields);
    expect(res.status).toBe(403);
    expect(await stateOf()).toBe("awaiting_approval");
  });
});

/** A POST without the Origin header, as a few clients send. */
function postWithoutOrigin(
  path: string,
  cookie: string,
  fields: Record<string, string>,
  headers: Record<string, string>,
) {
  return app.fetch(
    new Request(`${ORIGIN}${path}`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(fields),
      redirect: "manual",
    }),
    env,
    createExecutionContext(),
  );
}

describe("Cloudflare Access", () => {
  const config: AccessConfig = { teamDomain: "team.example.com", aud: "aud-tag-1" };
  const email = "ada@example.com";

  async function keyPair(kid: string) {
    const pair = (await crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        modulusLength: 2048,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: "SHA-256",
      },
      true,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    const jwk = { ...((await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey), kid };
    return { privateKey: pair.privateKey, jwk };
  }

  async function jwt(privateKey: CryptoKey, kid: string, claims: Record<string, unknown>) {
    const part = (value: object) => toBase64url(new TextEncoder().encode(JSON.stringify(value)));
    const signed = `${part({ alg: "RS256", kid })}.${part(claims)}`;
    const mac = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", privateKey, new TextEncoder().encode(signed));
    return `${signed}.${toBase64url(mac)}`;
  }

  const now = Date.now();
  const claims = {
    aud: [config.aud],
    iss: `https://${config.teamDomain}`,
    sub: "user-1",
    email,
    exp: Math.floor(now / 1000) + 600,
    nbf: Math.floor(now / 1000) - 10,
  };

  afterEach(() => vi.restoreAllMocks());

  it("verifies the signature, kid, audience, issuer and expiry", async () => {
    const { privateKey, jwk } = await keyPair("k1");
    const other = await keyPair("k1");
    const keys = async () => [jwk];
    const verify = async (token: string) => verifyAccessJwt(token, config, keys, now);
    expect(await verify(await jwt(privateKey, "k1", claims))).toEqual({ email, sub: "user-1" });
    expect(await verify(await jwt(other.privateKey, "k1", claims))).toBeNull();
    expect(await verify(await jwt(privateKey, "k2", claims))).toBeNull();
    expect(await verify(await jwt(privateKey, "k1", { ...claims, aud: ["other-app"] }))).toBeNull();
    expect(await verify(await jwt(privateKey, "k1", { ...claims, iss: "https://evil.example" }))).toBeNull();
    expect(
      await verify(await jwt(privateKey, "k1", { ...claims, exp: Math.floor(now / 1000) - 120 })),
    ).toBeNull();
    expect(await verify("not.a.jwt")).toBeNull();
    expect(await verify("a.b")).toBeNull();
  });

  it("is off unless configured: Access headers alone sign nobody in", async () => {
    const res = await page("/dashboard", undefined);
    const withHeaders = await app.fetch(
      new Request(`${ORIGIN}/dashboard`, {
        headers: { "cf-access-jwt-assertion": "x.y.z", "cf-access-authenticated-user-email": email },
      }),
      env,
      createExecutionContext(),
    );
    expect([res.status, withHeaders.status]).toEqual([303, 303]);
  });

  it("when configured, lets a verified identity in and refuses a forged one", async () => {
    const { privateKey, jwk } = await keyPair("k-route");
    const certs = vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      expect(String(input instanceof Request ? input.url : input)).toBe(
        "https://team.example.com/cdn-cgi/access/certs",
      );
      return Response.json({ keys: [jwk] });
    });
    const accessEnv = { ...env, CF_ACCESS_TEAM_DOMAIN: config.teamDomain, CF_ACCESS_AUD: config.aud };
    const visit = async (assertion: string, userEmail = email) =>
      app.fetch(
        new Request(`${ORIGIN}/dashboard/runners`, {
          headers: { "cf-access-jwt-assertion": assertion, "cf-access-authenticated-user-email": userEmail },
        }),
        accessEnv,
        createExecutionContext(),
      );
    const good = await visit(await jwt(privateKey, "k-route", { ...claims, sub: "user-route" }));
    expect(good.status).toBe(200);
    expect(await good.text()).toContain(email);
    expect(certs).toHaveBeenCalled();
    const forged = await visit(await jwt((await keyPair("k-route")).privateKey, "k-route", claims));
    expect(forged.status).toBe(403);
    const mismatched = await visit(await jwt(privateKey, "k-route", claims), "eve@example.com");
    expect(mismatched.status).toBe(403);
  });
});

describe("Access signing keys", () => {
  afterEach(() => vi.restoreAllMocks());

  it("a certs endpoint that never answers fails at the deadline, and the failure is not cached", async () => {
    const asked: string[] = [];
    const team = `stall-${Date.now().toString(36)}.cloudflareaccess.com`;
    // A team domain that takes the request and never answers: only the deadline's abort ends the wait. Other
    // objects of the test runtime (earlier files' projects reconciling) still reach their forge.
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      if (new URL(String(input instanceof Request ? input.url : input)).host !== team)
        return realFetch(input, init);
      asked.push(String(input));
      return new Promise((_, reject) => {
        const signal = init?.signal;
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    });
    await expect(fetchAccessKeys(team, false, 50)).rejects.toThrow(/timed out|abort/i);
    await expect(fetchAccessKeys(team, false, 50)).rejects.toThrow(/timed out|abort/i);
    expect(asked).toEqual([`https://${team}/cdn-cgi/access/certs`, `https://${team}/cdn-cgi/access/certs`]);
  });
});
