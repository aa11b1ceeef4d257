/**
 * Markers in Conveyor's own forge comments, by which a retried effect finds its first post. A marker is an
 * HMAC of the comment's key under a key derived from CONVEYOR_SECRETS_KEY: effect keys are predictable, and a
 * marker anyone could compute would let anyone silence the comment Conveyor is about to post.
 */
import { toHex } from "./hex.ts";
import { secretsKeyBytes } from "./secrets.ts";

const INFO = new TextEncoder().encode("conveyor comment markers v1");
const keys = new Map<string, Promise<CryptoKey>>();

function markerKey(secretsKey: string | undefined): Promise<CryptoKey> {
  const cached = keys.get(secretsKey ?? "");
  if (cached) return cached;
  const derived = crypto.subtle
    .importKey("raw", secretsKeyBytes(secretsKey), "HKDF", false, ["deriveKey"])
    .then((base) =>
      crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(32), info: INFO },
        base,
        { name: "HMAC", hash: "SHA-256", length: 256 },
        false,
        ["sign"],
      ),
    );
  keys.set(secretsKey ?? "", derived);
  return derived;
}

/** `<!-- conveyor:<128-bit HMAC of key> -->`, the same for the same key and secret. */
export async function commentMarker(secretsKey: string | undefined, key: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await markerKey(secretsKey), new TextEncoder().encode(key));
  return `<!-- conveyor:${toHex(mac).slice(0, 32)} -->`;
}
