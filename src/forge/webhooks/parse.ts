import { toHex } from "../../crypto/hex.ts";
import type { DeliveryResult, Forge } from "./events.ts";
import { normalizeGitea } from "./gitea.ts";
import { normalizeGithub } from "./github.ts";
import { readDeliveryHeaders } from "./headers.ts";
import { decodeJsonObject } from "./payload.ts";

export { WebhookError } from "./payload.ts";

export type ParsedDelivery = {
  deliveryId: string;
  /** GitHub: X-GitHub-Event. Gitea/Forgejo: the specific X-*-Event-Type, e.g. `pull_request_sync`. */
  eventName: string;
  result: DeliveryResult;
};

/**
 * Reads a delivery whose signature was already verified. Throws WebhookError (400) for missing delivery or
 * event headers, a body that is not a JSON object, or a payload without the fields Conveyor uses. Events and
 * actions Conveyor does not use come back `ignored`, with the reason.
 */
export function parseDelivery(forge: Forge, headers: Headers, rawBody: Uint8Array): ParsedDelivery {
  const { deliveryId, eventName } = readDeliveryHeaders(forge, headers);
  const body = decodeJsonObject(rawBody);
  const result =
    forge === "github" ? normalizeGithub(eventName, body) : normalizeGitea(forge, eventName, body);
  return { deliveryId, eventName, result };
}

const encoder = new TextEncoder();

/**
 * SHA-256 (hex) over `forge NUL eventName NUL rawBody`: the identity of a delivery's content, to drop a Gitea
 * "replay", which re-sends the stored payload under a new delivery id.
 *
 * Why the raw bytes and not a canonical re-serialization: a replay re-sends the payload Gitea stored for the
 * original delivery, byte for byte (that is also why its signature still verifies), so the bytes are already
 * the stable form; re-serializing would cost a parse and catch nothing more. The cost of this choice: two
 * distinct events with byte-identical bodies would count as one, but payloads embed the changed object's
 * current state and timestamps, so distinct events practically always differ. The event name is part of the
 * key because one body could in principle be sent under two event types; NUL occurs in neither name.
 */
export async function contentKey(forge: Forge, eventName: string, rawBody: Uint8Array): Promise<string> {
  const prefix = encoder.encode(`${forge}\0${eventName}\0`);
  const canonical = new Uint8Array(prefix.length + rawBody.length);
  canonical.set(prefix);
  canonical.set(rawBody, prefix.length);
  return toHex(await crypto.subtle.digest("SHA-256", canonical));
}
