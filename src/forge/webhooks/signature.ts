import { constantTimeEqual } from "../../crypto/constant-time.ts";
import { toHex } from "../../crypto/hex.ts";
import type { Forge } from "./events.ts";

/** `header` names the header that was checked (null when none carried a signature). Reject → answer 401. */
export type SignatureResult =
  | { ok: true; header: string }
  | { ok: false; reason: "missing" | "mismatch"; header: string | null };

type SignatureHeader = { name: string; prefix: string };

// Preference order per forge. Gitea and Forgejo send the same HMAC in several headers (Forgejo also all of
// Gitea's, older Forgejo only Gitea's); any one of them proves knowledge of the secret.
const SIGNATURE_HEADERS: Record<Forge, SignatureHeader[]> = {
  github: [{ name: "X-Hub-Signature-256", prefix: "sha256=" }],
  gitea: [
    { name: "X-Gitea-Signature", prefix: "" },
    { name: "X-Hub-Signature-256", prefix: "sha256=" },
  ],
  forgejo: [
    { name: "X-Forgejo-Signature", prefix: "" },
    { name: "X-Gitea-Signature", prefix: "" },
    { name: "X-Hub-Signature-256", prefix: "sha256=" },
  ],
};

const encoder = new TextEncoder();

/** Lowercase hex of HMAC-SHA256(secret, rawBody): the value forges put in their signature headers. */
export async function signBody(secret: string, rawBody: Uint8Array): Promise<string> {
  requireSecret(secret);
  return toHex(await crypto.subtle.sign("HMAC", await hmacKey(secret), rawBody));
}

/**
 * Checks the delivery's HMAC over the exact bytes received (Gitea/Forgejo bodies are pretty-printed JSON, so
 * never re-serialize before verifying). A header that is absent or empty (Gitea sends `""` and `sha256=`
 * without a secret) does not count as a signature.
 */
export async function verifySignature(
  forge: Forge,
  headers: Headers,
  rawBody: Uint8Array,
  secret: string,
): Promise<SignatureResult> {
  // A configuration error, not a bad delivery: surface it even when the delivery carries no signature.
  requireSecret(secret);
  const candidate = SIGNATURE_HEADERS[forge]
    .map(({ name, prefix }) => ({ name, prefix, value: headers.get(name)?.trim().toLowerCase() ?? "" }))
    .find(({ prefix, value }) => value !== "" && value !== prefix);
  if (candidate === undefined) return { ok: false, reason: "missing", header: null };

  const expected = candidate.prefix + (await signBody(secret, rawBody));
  const ok = constantTimeEqual(encoder.encode(expected), encoder.encode(candidate.value));
  return ok
    ? { ok: true, header: candidate.name }
    : { ok: false, reason: "mismatch", header: candidate.name };
}

// Importing the key is a good part of verifying a delivery; a project's secret rarely changes.
// Spelled through `crypto` so Node's types (which lack a global CryptoKey) accept it too.
type HmacKey = ReturnType<typeof crypto.subtle.importKey>;
const keys = new Map<string, HmacKey>();
const MAX_KEYS = 256;

function hmacKey(secret: string): HmacKey {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= MAX_KEYS) keys.clear();
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    keys.set(secret, key);
  }
  return key;
}

// With an empty key anyone can compute a valid signature.
function requireSecret(secret: string): void {
  if (secret === "") throw new RangeError("webhook secret must not be empty");
}
