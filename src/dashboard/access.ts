/**
 * Cloudflare Access in front of the dashboard. Access adds `Cf-Access-Jwt-Assertion` (an RS256 JWT) and
 * `Cf-Access-Authenticated-User-Email` to every request it lets through; the headers alone prove nothing
 * (anyone can send them to a Worker reachable without Access), so the JWT is verified against the team's
 * signing keys (`https://<team domain>/cdn-cgi/access/certs`) and the application's AUD tag. Without both
 * settings Access is off and its headers are ignored.
 */
import { z } from "zod";
import type { Env } from "../env.ts";
import { boundedText } from "../http/bounded.ts";
import { IsolateCache } from "../isolate-cache.ts";
import { fromBase64url } from "./base64url.ts";

export type AccessConfig = { teamDomain: string; aud: string };
export type AccessIdentity = { email: string; sub: string };
export type AccessKeys = (teamDomain: string, refresh: boolean) => Promise<JsonWebKey[]>;

const KEYS_TTL_MS = 10 * 60_000;
/** A token with an unknown key id re-reads the keys at most this often: forged ids cannot make us a proxy. */
const KEYS_REFRESH_MS = 60_000;
const CLOCK_SKEW_S = 60;
const RS256 = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

export function accessConfig(env: Env): AccessConfig | null {
  const teamDomain = env.CF_ACCESS_TEAM_DOMAIN?.trim()
    .replace(/^https:\/\//, "")
    .replace(/\/+$/, "");
  const aud = env.CF_ACCESS_AUD?.trim();
  return teamDomain && aud ? { teamDomain, aud } : null;
}

const jwksSchema = z.object({ keys: z.array(z.looseObject({ kid: z.string(), kty: z.literal("RSA") })) });
const headerSchema = z.object({ alg: z.literal("RS256"), kid: z.string() });
const claimsSchema = z.object({
  aud: z.union([z.string(), z.array(z.string())]),
  iss: z.string(),
  sub: z.string().min(1),
  email: z.string().min(1).max(320),
  exp: z.number(),
  nbf: z.number().optional(),
});

const ACCESS_CERTS_TIMEOUT_MS = 10_000;
/** A team's certs document is a few kB. */
const ACCESS_CERTS_MAX_BYTES = 256 * 1024;

// Only keys already read are shared (src/isolate-cache.ts): no request awaits another's fetch in flight.
const cachedKeys = new IsolateCache<JsonWebKey[]>();

/** The team's signing keys, cached per isolate; `refresh` re-reads them (a key unknown to the cache). */
export const fetchAccessKeys = (
  teamDomain: string,
  refresh: boolean,
  timeoutMs = ACCESS_CERTS_TIMEOUT_MS,
): Promise<JsonWebKey[]> => {
  const load = async () => {
    // The request waits on this: a stalled fetch fails (and is not cached).
    const res = await fetch(`https://${teamDomain}/cdn-cgi/access/certs`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) throw new Error(`Access certs: ${res.status}`);
    return jwksSchema.parse(JSON.parse(await boundedText(res, ACCESS_CERTS_MAX_BYTES))).keys as JsonWebKey[];
  };
  const now = Date.now();
  return cachedKeys.get(
    teamDomain,
    load,
    ({ at }) => now - at < (refresh ? KEYS_REFRESH_MS : KEYS_TTL_MS),
    now,
  );
};

const decodeJson = (part: string): unknown => JSON.parse(new TextDecoder().decode(fromBase64url(part)));

/** The identity an Access JWT asserts, or null unless it is signed by the team, for this app, and current. */
export async function verifyAccessJwt(
  jwt: string,
  config: AccessConfig,
  keys: AccessKeys = fetchAccessKeys,
  now = Date.now(),
): Promise<AccessIdentity | null> {
  const [head, body, signature, ...extra] = jwt.split(".");
  if (!head || !body || !signature || extra.length > 0) return null;
  let header: z.infer<typeof headerSchema>;
  let claims: z.infer<typeof claimsSchema>;
  let mac: Uint8Array;
  try {
    header = headerSchema.parse(decodeJson(head));
    claims = claimsSchema.parse(decodeJson(body));
    mac = fromBase64url(signature);
  } catch {
    return null;
  }
  const find = async (refresh: boolean) =>
    (await keys(config.teamDomain, refresh)).find((k) => (k as { kid?: string }).kid === header.kid);
  const jwk = (await find(false)) ?? (await find(true));
  if (!jwk) return null;
  const key = await crypto.subtle.importKey("jwk", jwk, RS256, false, ["verify"]);
  const signed = new TextEncoder().encode(`${head}.${body}`);
  if (!(await crypto.subtle.verify(RS256, key, mac, signed))) return null;
  const seconds = now / 1000;
  const audiences = typeof claims.aud === "string" ? [claims.aud] : claims.aud;
  if (!audiences.includes(config.aud) || claims.iss !== `https://${config.teamDomain}`) return null;
  if (claims.exp + CLOCK_SKEW_S < seconds || (claims.nbf ?? 0) - CLOCK_SKEW_S > seconds) return null;
  return { email: claims.email, sub: claims.sub };
}

/** The verified identity of a request that came through Access, or null; the email header must agree. */
export async function accessIdentity(
  headers: Headers,
  config: AccessConfig,
  keys: AccessKeys = fetchAccessKeys,
): Promise<AccessIdentity | null> {
  const jwt = headers.get("cf-access-jwt-assertion");
  const email = headers.get("cf-access-authenticated-user-email");
  if (!jwt || !email) return null;
  const identity = await verifyAccessJwt(jwt, config, keys);
  return identity && identity.email.toLowerCase() === email.toLowerCase() ? identity : null;
}
