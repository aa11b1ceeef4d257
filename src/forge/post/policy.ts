/**
 * What a post of foreign text may keep on one project: links to the forge itself and to the hosts the project
 * allows, mentions of the logins and teams it allows; and each forge's length limits. Pure.
 */
import type { ForgeKind } from "../client/types.ts";

export type PostPolicy = {
  forge: ForgeKind;
  /** The forge's web origin (`https://github.com`): links there, and relative links, stay. */
  forgeOrigin: string;
  /** Further hosts `https` links and images may point at (`docs.example.com`, or `*.example.com`). */
  linkHosts: readonly string[];
  /** Logins and teams (`org/team`) a post may mention; compared without case. */
  mentions: readonly string[];
};

/**
 * GitHub refuses a body over 65 536 characters ("body is too long (maximum is 65536 characters)") and a title
 * over 256. Gitea and Forgejo validate no body length in their API (bodies are LONGTEXT) and cap titles at
 * 255 (`MaxSize(255)`); Conveyor holds bodies there to GitHub's size as well, which no reader gets through.
 */
export const FORGE_LIMITS: Record<ForgeKind, { body: number; title: number }> = {
  github: { body: 65_536, title: 256 },
  gitea: { body: 65_536, title: 255 },
  forgejo: { body: 65_536, title: 255 },
};

/** Room kept in every body for the marker Conveyor appends (`\n\n<!-- conveyor:<32 hex> -->` is 52). */
export const MARKER_ROOM = 64;

/** A body's most characters, with room for Conveyor's marker. JS length (UTF-16) never undercounts. */
export const bodyLimit = (policy: PostPolicy): number => FORGE_LIMITS[policy.forge].body - MARKER_ROOM;

/**
 * Whether a link or image may stay live: the forge's own origin (relative links resolve there), or `https`
 * on the default port to an allowed host. Anything unparsable is not allowed.
 */
export function allowedUrl(url: string, policy: PostPolicy): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url, `${policy.forgeOrigin}/`);
  } catch {
    return false;
  }
  if (parsed.origin === policy.forgeOrigin) return true;
  if (parsed.protocol !== "https:" || parsed.port !== "" || parsed.username || parsed.password) return false;
  return allowedHost(parsed.hostname, policy.linkHosts);
}

/** `host` is listed, or lies under a listed `*.domain`. */
export function allowedHost(host: string, allowed: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return allowed.some((entry) => {
    const pattern = entry.toLowerCase();
    return pattern.startsWith("*.") ? name.endsWith(pattern.slice(1)) : name === pattern;
  });
}

/** A URL's host as a reader should see it, or the URL itself where it has none. */
export function shownHost(url: string, policy: PostPolicy): string {
  try {
    return new URL(url, `${policy.forgeOrigin}/`).host || url;
  } catch {
    return url;
  }
}

export const mentionAllowed = (name: string, policy: PostPolicy): boolean =>
  policy.mentions.some((allowed) => allowed.toLowerCase() === name.toLowerCase());
