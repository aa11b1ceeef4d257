import type { HttpClientOptions } from "./http.ts";
import type { ForgeKind } from "./types.ts";

/** The HTTP layer's knobs pass through unchanged. */
type HttpKnobs =
  | "fetch"
  | "sleep"
  | "now"
  | "random"
  | "backoff"
  | "maxAttempts"
  | "maxWaitMs"
  | "timeoutMs"
  | "conditional"
  | "observe"
  | "pacer";

export interface ForgeClientOptions extends Pick<HttpClientOptions, HttpKnobs> {
  forge: ForgeKind;
  /** `https://codeberg.org/api/v1`, `https://api.github.com`, or GitHub Enterprise `https://host/api/v3`. */
  apiUrl: string;
  /** `owner/name`. */
  repo: string;
  token: string;
  /** GitHub rejects requests without one, and Workers' fetch sends none. */
  userAgent?: string;
}

export const DEFAULT_USER_AGENT = "conveyor";

/** `/repos/{owner}/{name}`, encoded; both forges put every repository endpoint under it. */
export function repoPath(repo: string): string {
  const match = /^([^/\s]+)\/([^/\s]+)$/.exec(repo);
  // `.` and `..` survive encoding and would be resolved out of `/repos/` by the URL.
  if (!match?.[1] || !match[2] || [match[1], match[2]].some((name) => /^\.{1,2}$/.test(name))) {
    throw new RangeError(`repo must be "owner/name": ${JSON.stringify(repo)}`);
  }
  return `/repos/${encodeURIComponent(match[1])}/${encodeURIComponent(match[2])}`;
}

/** The shared http layer's options: the client's, plus how this forge authenticates and negotiates. */
export function transportOptions(
  options: ForgeClientOptions,
  forge: { authorization: string; accept?: string; headers?: Record<string, string> },
): HttpClientOptions {
  // The HTTP knobs pass through as they are; the rest is this forge's.
  const { forge: kind, apiUrl, repo: _repo, token, userAgent, ...knobs } = options;
  return {
    ...knobs,
    forge: kind,
    baseUrl: apiUrl,
    token,
    authorization: forge.authorization,
    accept: forge.accept,
    headers: { "User-Agent": userAgent ?? DEFAULT_USER_AGENT, ...forge.headers },
  };
}
