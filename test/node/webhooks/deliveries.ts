import { createHmac } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import type { Forge } from "../../../src/forge/webhooks/events.ts";

// Builds deliveries the way each forge really sends them, from the shared fixture bodies. The HMACs are
// computed here with node:crypto, independently of the code under test.

export const FIXTURES = new URL("../../../../shared/fixtures/webhooks/", import.meta.url);

export const SECRET = "conveyor webhook secret";

export const DELIVERY_ID = "6c0a3c2e-5d1b-4f5e-9a59-3b1f0d8f2a11";

/** Every fixture body, as `<forge>/<file>.json`. */
export async function listFixtures(): Promise<string[]> {
  const forges = ["forgejo", "gitea", "github"];
  const lists = await Promise.all(
    forges.map(async (forge) => {
      const files = await readdir(new URL(`${forge}/`, FIXTURES));
      return files.filter((file) => file.endsWith(".json")).map((file) => `${forge}/${file}`);
    }),
  );
  return lists.flat().sort();
}

export async function readFixture(path: string): Promise<Uint8Array> {
  return new Uint8Array(await readFile(new URL(path, FIXTURES)));
}

// biome-ignore lint/suspicious/noExplicitAny: tests edit deep fields of real payloads; parsing checks them.
export type FixtureJson = Record<string, any>;

export async function readFixtureJson(path: string): Promise<FixtureJson> {
  return JSON.parse(new TextDecoder().decode(await readFixture(path))) as FixtureJson;
}

export function encodeJson(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value, null, 2));
}

export function hmacHex(algorithm: "sha1" | "sha256", secret: string, body: Uint8Array): string {
  return createHmac(algorithm, secret).update(body).digest("hex");
}

/** Gitea/Forgejo name an event twice: grouped (X-*-Event) and specific (X-*-Event-Type). */
export type GiteaEventNames = { grouped: string; type: string };

export type DeliveryOptions = {
  /** null: the webhook has no secret, so the forge sends empty signature headers. */
  secret?: string | null;
  deliveryId?: string;
};

/** Headers Gitea sends (services/webhook/deliver.go): its own, plus Gogs- and GitHub-compatible copies. */
export function giteaHeaders(
  event: GiteaEventNames,
  body: Uint8Array,
  options: DeliveryOptions = {},
): Headers {
  const { secret = SECRET, deliveryId = DELIVERY_ID } = options;
  const sha256 = secret === null ? "" : hmacHex("sha256", secret, body);
  const sha1 = secret === null ? "" : hmacHex("sha1", secret, body);
  return new Headers({
    "Content-Type": "application/json",
    "X-Gitea-Delivery": deliveryId,
    "X-Gitea-Event": event.grouped,
    "X-Gitea-Event-Type": event.type,
    "X-Gitea-Signature": sha256,
    "X-Gogs-Delivery": deliveryId,
    "X-Gogs-Event": event.grouped,
    "X-Gogs-Event-Type": event.type,
    "X-Gogs-Signature": sha256,
    "X-Hub-Signature": `sha1=${sha1}`,
    "X-Hub-Signature-256": `sha256=${sha256}`,
    "X-GitHub-Delivery": deliveryId,
    "X-GitHub-Event": event.grouped,
    "X-GitHub-Event-Type": event.type,
  });
}

/** Headers Forgejo sends: X-Forgejo-* and, for compatibility, everything Gitea sends. */
export function forgejoHeaders(
  event: GiteaEventNames,
  body: Uint8Array,
  options: DeliveryOptions = {},
): Headers {
  const headers = giteaHeaders(event, body, options);
  headers.set("X-Forgejo-Delivery", headers.get("X-Gitea-Delivery") ?? "");
  headers.set("X-Forgejo-Event", event.grouped);
  headers.set("X-Forgejo-Event-Type", event.type);
  headers.set("X-Forgejo-Signature", headers.get("X-Gitea-Signature") ?? "");
  return headers;
}

export function githubHeaders(event: string, body: Uint8Array, options: DeliveryOptions = {}): Headers {
  const { secret = SECRET, deliveryId = DELIVERY_ID } = options;
  const headers = new Headers({
    "Content-Type": "application/json",
    "User-Agent": "GitHub-Hookshot/044aadd",
    "X-GitHub-Event": event,
    "X-GitHub-Delivery": deliveryId,
    "X-GitHub-Hook-ID": "292430182",
    "X-GitHub-Hook-Installation-Target-ID": "79929171",
    "X-GitHub-Hook-Installation-Target-Type": "repository",
  });
  // GitHub leaves the signature headers out entirely when the webhook has no secret.
  if (secret !== null) {
    headers.set("X-Hub-Signature", `sha1=${hmacHex("sha1", secret, body)}`);
    headers.set("X-Hub-Signature-256", `sha256=${hmacHex("sha256", secret, body)}`);
  }
  return headers;
}

export type Delivery =
  | { forge: "gitea" | "forgejo"; event: GiteaEventNames }
  | { forge: Extract<Forge, "github">; event: string };

export function headersFor(delivery: Delivery, body: Uint8Array, options: DeliveryOptions = {}): Headers {
  switch (delivery.forge) {
    case "gitea":
      return giteaHeaders(delivery.event, body, options);
    case "forgejo":
      return forgejoHeaders(delivery.event, body, options);
    case "github":
      return githubHeaders(delivery.event, body, options);
  }
}

/** A copy of `body` with one bit flipped, `fromEnd` bytes before its end (clear of the trailing brace). */
export function flipBit(body: Uint8Array, fromEnd: number): Uint8Array {
  const copy = body.slice();
  const index = copy.length - fromEnd;
  copy[index] = (copy[index] ?? 0) ^ 1;
  return copy;
}
