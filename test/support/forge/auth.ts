import type { Repo, User } from "./state.ts";
import type { Store } from "./store.ts";

/** Gitea's access modes, weakest first; `owner` is the repository's owner. */
export type AccessMode = "none" | "read" | "write" | "admin" | "owner";

const RANK: Record<AccessMode, number> = { none: 0, read: 1, write: 2, admin: 3, owner: 4 };

export function atLeast(mode: AccessMode, needed: AccessMode): boolean {
  return RANK[mode] >= RANK[needed];
}

export type Credentials = { kind: "anonymous" } | { kind: "invalid" } | { kind: "user"; user: User };

/**
 * `Authorization: token <t>` (or `Bearer <t>`) for the API; Basic for git, where the password is a token
 * (any username) or the username is a token with an empty password (or `x-oauth-basic`), as Gitea accepts.
 * There are no passwords.
 */
export function authenticate(store: Store, header: string | undefined): Credentials {
  if (!header) return { kind: "anonymous" };
  const [scheme = "", value = ""] = header.trim().split(/\s+/, 2);
  let token: string | undefined;
  switch (scheme.toLowerCase()) {
    case "token":
    case "bearer":
      token = value;
      break;
    case "basic": {
      const decoded = Buffer.from(value, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      const username = colon < 0 ? decoded : decoded.slice(0, colon);
      const password = colon < 0 ? "" : decoded.slice(colon + 1);
      token = password === "" || password === "x-oauth-basic" ? username : password;
      break;
    }
  }
  const user = token ? store.userByToken(token) : undefined;
  return user ? { kind: "user", user } : { kind: "invalid" };
}

/**
 * What `user` may do in `repo`, by Gitea's rules: site admins are `admin` everywhere (even in their own
 * repositories), the owner is `owner`, collaborators have their level, everyone else may read a public
 * repository and nothing else.
 */
export function accessMode(user: User, repo: Repo): AccessMode {
  if (user.isAdmin) return "admin";
  if (user.login.toLowerCase() === repo.owner.toLowerCase()) return "owner";
  const collaborator = repo.collaborators.find((entry) => entry.userId === user.id);
  if (collaborator) return collaborator.level;
  return repo.private ? "none" : "read";
}
