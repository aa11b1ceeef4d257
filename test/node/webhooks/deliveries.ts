import { createHmac } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import type { Delivery, GiteaEventNames, Signatures } from "../../support/webhook-headers.ts";
import * as headers from "../../support/webhook-headers.ts";

export type { Delivery, GiteaEventNames } from "../../support/webhook-headers.ts";

// Builds deliveries the way each forge really sends them, from the fixture bodies in test/fixtures/webhooks. The HMACs are
// computed here with node:crypto, independently of the code under test.

export const FIXTURES = new URL("../../fixtures/webhooks/", import.meta.url);

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

export type DeliveryOptions = {
  /** null: the webhook has no secret, so the forge sends empty signature headers. */
  secret?: string | null;
  deliveryId?: string;
};

function sign(body: Uint8Array, { secret = SECRET }: DeliveryOptions): Signatures {
  return secret === null
    ? null
    : { sha1: hmacHex("sha1", secret, body), sha256: hmacHex("sha256", secret, body) };
}

const id = (options: DeliveryOptions) => options.deliveryId ?? DELIVERY_ID;

export const giteaHeaders = (event: GiteaEventNames, body: Uint8Array, options: DeliveryOptions = {}) =>
  headers.giteaHeaders(event, sign(body, options), id(options));

export const forgejoHeaders = (event: GiteaEventNames, body: Uint8Array, options: DeliveryOptions = {}) =>
  headers.forgejoHeaders(event, sign(body, options), id(options));

export const githubHeaders = (event: string, body: Uint8Array, options: DeliveryOptions = {}) =>
  headers.githubHeaders(event, sign(body, options), id(options));

export const headersFor = (delivery: Delivery, body: Uint8Array, options: DeliveryOptions = {}) =>
  headers.headersFor(delivery, sign(body, options), id(options));

/** A copy of `body` with one bit flipped, `fromEnd` bytes before its end (clear of the trailing brace). */
export function flipBit(body: Uint8Array, fromEnd: number): Uint8Array {
  const copy = body.slice();
  const index = copy.length - fromEnd;
  copy[index] = (copy[index] ?? 0) ^ 1;
  return copy;
}
