import { describe, expect, it } from "vitest";
import type { Forge } from "../../../src/forge/webhooks/events.ts";
import { signBody, verifySignature } from "../../../src/forge/webhooks/signature.ts";
import { FIXTURE_CASES } from "../../support/webhook-fixtures.ts";
import { flipBit, headersFor, readFixture, SECRET } from "./deliveries.ts";

const encode = (text: string) => new TextEncoder().encode(text);

describe("signBody", () => {
  it.each([
    // GitHub's documented example (docs: "Validating webhook deliveries").
    [
      "It's a Secret to Everybody",
      "Hello, World!",
      "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    ],
    [
      "key",
      "The quick brown fox jumps over the lazy dog",
      "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8",
    ],
  ])("HMAC-SHA256(%j, %j)", async (secret, body, expected) => {
    expect(await signBody(secret, encode(body))).toBe(expected);
  });

  it("refuses an empty secret", async () => {
    await expect(signBody("", encode("{}"))).rejects.toThrow(RangeError);
    await expect(verifySignature("github", new Headers(), encode("{}"), "")).rejects.toThrow(RangeError);
  });
});

describe("verifySignature on every fixture", () => {
  const cases = Object.entries(FIXTURE_CASES);

  it.each(cases)("%s: signed with another secret → mismatch", async (path, { delivery }) => {
    const body = await readFixture(path);
    const headers = headersFor(delivery, body, { secret: "not the secret" });
    expect(await verifySignature(delivery.forge, headers, body, SECRET)).toMatchObject({
      ok: false,
      reason: "mismatch",
    });
  });

  it.each(cases)("%s: body changed after signing → mismatch", async (path, { delivery }) => {
    const body = await readFixture(path);
    const headers = headersFor(delivery, body);
    expect(await verifySignature(delivery.forge, headers, flipBit(body, 2), SECRET)).toMatchObject({
      ok: false,
      reason: "mismatch",
    });
  });

  it.each(cases)("%s: truncated body → mismatch", async (path, { delivery }) => {
    const body = await readFixture(path);
    const headers = headersFor(delivery, body);
    expect(await verifySignature(delivery.forge, headers, body.subarray(0, -1), SECRET)).toMatchObject({
      ok: false,
      reason: "mismatch",
    });
  });

  // Gitea/Forgejo send the headers empty ("" and "sha256=") when the hook has no secret; GitHub omits them.
  it.each(cases)("%s: webhook without a secret → missing", async (path, { delivery }) => {
    const body = await readFixture(path);
    const headers = headersFor(delivery, body, { secret: null });
    expect(await verifySignature(delivery.forge, headers, body, SECRET)).toEqual({
      ok: false,
      reason: "missing",
      header: null,
    });
  });

  it.each(cases)("%s: signature headers removed → missing", async (path, { delivery }) => {
    const body = await readFixture(path);
    const headers = headersFor(delivery, body);
    for (const name of [...headers.keys()].filter((key) => key.includes("signature"))) headers.delete(name);
    expect(await verifySignature(delivery.forge, headers, body, SECRET)).toEqual({
      ok: false,
      reason: "missing",
      header: null,
    });
  });
});

describe("verifySignature header choice", () => {
  const body = encode('{"zen":"Keep it logically awesome."}');
  type Entries = (sig: string) => Record<string, string>;

  it.each<[Forge, Entries, string]>([
    ["github", (sig) => ({ "X-Hub-Signature-256": `sha256=${sig}` }), "X-Hub-Signature-256"],
    ["gitea", (sig) => ({ "X-Gitea-Signature": sig }), "X-Gitea-Signature"],
    ["gitea", (sig) => ({ "X-Hub-Signature-256": `sha256=${sig}` }), "X-Hub-Signature-256"],
    [
      "gitea",
      (sig) => ({ "X-Gitea-Signature": "", "X-Hub-Signature-256": `sha256=${sig}` }),
      "X-Hub-Signature-256",
    ],
    ["forgejo", (sig) => ({ "X-Forgejo-Signature": sig }), "X-Forgejo-Signature"],
    ["forgejo", (sig) => ({ "X-Gitea-Signature": sig }), "X-Gitea-Signature"],
    ["forgejo", (sig) => ({ "X-Hub-Signature-256": `sha256=${sig}` }), "X-Hub-Signature-256"],
  ])("%s accepts %s", async (forge, entries, header) => {
    const headers = new Headers(entries(await signBody(SECRET, body)));
    expect(await verifySignature(forge, headers, body, SECRET)).toEqual({ ok: true, header });
  });

  it("accepts uppercase hex and surrounding whitespace", async () => {
    const sig = (await signBody(SECRET, body)).toUpperCase();
    const headers = new Headers({ "X-Hub-Signature-256": ` SHA256=${sig} ` });
    expect(await verifySignature("github", headers, body, SECRET)).toEqual({
      ok: true,
      header: "X-Hub-Signature-256",
    });
  });

  it.each<[string, Forge, Entries]>([
    // The prefix is part of the format: a bare hex in X-Hub-Signature-256 is not a signature.
    ["bare hex in X-Hub-Signature-256", "github", (sig) => ({ "X-Hub-Signature-256": sig })],
    ["sha1= prefix", "github", (sig) => ({ "X-Hub-Signature-256": `sha1=${sig}` })],
    ["prefixed X-Gitea-Signature", "gitea", (sig) => ({ "X-Gitea-Signature": `sha256=${sig}` })],
    ["one hex digit short", "gitea", (sig) => ({ "X-Gitea-Signature": sig.slice(0, -1) })],
    ["one hex digit extra", "forgejo", (sig) => ({ "X-Forgejo-Signature": `${sig}0` })],
    ["not hex", "gitea", () => ({ "X-Gitea-Signature": "z".repeat(64) })],
    // The first non-empty header decides; a good one later does not rescue a bad one.
    ["bad first header", "forgejo", (sig) => ({ "X-Forgejo-Signature": "00", "X-Gitea-Signature": sig })],
  ])("%s → mismatch", async (_, forge, entries) => {
    const headers = new Headers(entries(await signBody(SECRET, body)));
    expect(await verifySignature(forge, headers, body, SECRET)).toMatchObject({
      ok: false,
      reason: "mismatch",
    });
  });

  it.each<[string, Forge, Record<string, string>]>([
    ["no headers", "github", {}],
    ["empty", "github", { "X-Hub-Signature-256": "" }],
    ["prefix only", "github", { "X-Hub-Signature-256": "sha256=" }],
    // Conveyor does not accept SHA-1.
    ["only X-Hub-Signature (SHA-1)", "github", { "X-Hub-Signature": "sha1=0123" }],
    // Header names of other forges do not count.
    ["X-Gitea-Signature on GitHub", "github", { "X-Gitea-Signature": "0123" }],
    ["X-Forgejo-Signature on Gitea", "gitea", { "X-Forgejo-Signature": "0123" }],
    ["blank and prefix-only", "gitea", { "X-Gitea-Signature": " ", "X-Hub-Signature-256": "sha256=" }],
  ])("%s → missing", async (_, forge, entries) => {
    expect(await verifySignature(forge, new Headers(entries), body, SECRET)).toEqual({
      ok: false,
      reason: "missing",
      header: null,
    });
  });
});
