import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { contentKey, parseDelivery } from "../../../src/forge/webhooks/parse.ts";
import { flipBit, giteaHeaders, readFixture } from "./deliveries.ts";

const PATH = "gitea/pull_request.synchronized.json";
const SYNC = { grouped: "pull_request", type: "pull_request_sync" };

describe("contentKey", () => {
  it("is SHA-256 over forge NUL event name NUL raw body", async () => {
    const body = await readFixture(PATH);
    const expected = createHash("sha256").update("gitea\0pull_request_sync\0").update(body).digest("hex");
    expect(await contentKey("gitea", "pull_request_sync", body)).toBe(expected);
  });

  it("is the same for a Gitea replay: same bytes under a new delivery id", async () => {
    const body = await readFixture(PATH);
    const original = parseDelivery("gitea", giteaHeaders(SYNC, body, { deliveryId: "first" }), body);
    const replay = parseDelivery("gitea", giteaHeaders(SYNC, body, { deliveryId: "second" }), body);

    expect(replay.deliveryId).not.toBe(original.deliveryId);
    expect(await contentKey("gitea", replay.eventName, body)).toBe(
      await contentKey("gitea", original.eventName, body),
    );
  });

  it("differs when the body, the event name or the forge differs", async () => {
    const body = await readFixture(PATH);
    const key = await contentKey("gitea", "pull_request_sync", body);

    expect(await contentKey("gitea", "pull_request_sync", flipBit(body, 3))).not.toBe(key);
    expect(await contentKey("gitea", "pull_request", body)).not.toBe(key);
    expect(await contentKey("forgejo", "pull_request_sync", body)).not.toBe(key);
  });

  it("keeps the parts apart: moving bytes between event name and body changes the key", async () => {
    const encode = (text: string) => new TextEncoder().encode(text);
    expect(await contentKey("github", "issues", encode("x{}"))).not.toBe(
      await contentKey("github", "issuesx", encode("{}")),
    );
  });
});
