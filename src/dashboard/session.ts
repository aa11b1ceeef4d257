/**
 * Dashboard sessions without a session table: the cookie is `<expiresAt>.<nonce>.<mac>`, signed with a key
 * derived from the operator token, so rotating the token ends every session. Each session's CSRF token is
 * derived from the same key and the session's id.
 */
import { toHex } from "../crypto/hex.ts";
import { fromBase64url, toBase64url } from "./base64url.ts";

export const SESSION_TTL_MS = 12 * 60 * 60_000;

const encoder = new TextEncoder();
const HMAC = { name: "HMAC", hash: "SHA-256" } as const;
const COOKIE = /^(\d{1,15})\.([0-9a-f]{32})\.([A-Za-z0-9_-]{43})$/;

export type Session = { id: string; expiresAt: number };

/** A key of its own for the dashboard, so nothing it signs can stand for anything else made of the token. */
async function dashboardKey(adminToken: string): Promise<CryptoKey> {
  const root = await crypto.subtle.importKey("raw", encoder.encode(adminToken), HMAC, false, ["sign"]);
  const derived = await crypto.subtle.sign("HMAC", root, encoder.encode("conveyor dashboard v1"));
  return crypto.subtle.importKey("raw", derived, HMAC, false, ["sign", "verify"]);
}

export async function createSession(adminToken: string, now = Date.now()): Promise<string> {
  const expiresAt = now + SESSION_TTL_MS;
  const nonce = toHex(crypto.getRandomValues(new Uint8Array(16)));
  const payload = `session.${expiresAt}.${nonce}`;
  const mac = await crypto.subtle.sign("HMAC", await dashboardKey(adminToken), encoder.encode(payload));
  return `${expiresAt}.${nonce}.${toBase64url(mac)}`;
}

/** The session a cookie stands for, or null when it is malformed, forged or expired. */
export async function readSession(
  adminToken: string,
  cookie: string | undefined,
  now = Date.now(),
): Promise<Session | null> {
  const match = COOKIE.exec(cookie ?? "");
  if (!match) return null;
  const [, expires = "", nonce = "", mac = ""] = match;
  const payload = encoder.encode(`session.${expires}.${nonce}`);
  // subtle.verify compares in constant time.
  const valid = await crypto.subtle.verify(
    "HMAC",
    await dashboardKey(adminToken),
    fromBase64url(mac),
    payload,
  );
  const expiresAt = Number(expires);
  return valid && expiresAt > now ? { id: nonce, expiresAt } : null;
}

/** The CSRF token of a session (or of an Access identity): only someone who can read our pages knows it. */
export async function csrfToken(adminToken: string, sessionId: string): Promise<string> {
  const key = await dashboardKey(adminToken);
  return toBase64url(await crypto.subtle.sign("HMAC", key, encoder.encode(`csrf.${sessionId}`)));
}
