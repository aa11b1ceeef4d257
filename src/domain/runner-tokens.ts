/**
 * Runner tokens: when a presented token is good, when its runner should rotate it, and which projects a
 * runner may claim from. Pure; the registry (`src/runner-api/registry.ts`) reads and writes the rows.
 */

export const DEFAULT_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;

/** What the runners row says about its tokens (hashes only). */
export type TokenRow = {
  tokenHash: string;
  tokenExpiresAt: number;
  nextTokenHash: string | null;
  nextTokenExpiresAt: number | null;
};

export type TokenCheck =
  | { ok: false; error: string }
  | {
      ok: true;
      /** The presented token is the rotated one, used for the first time: it becomes the token. */
      promote: boolean;
      expiresAt: number;
      /** Less than half its lifetime is left: the runner should rotate now. */
      rotate: boolean;
    };

/** The row was found by `presentedHash` (its token or its next token). */
export function checkToken(row: TokenRow, presentedHash: string, now: number, ttlMs: number): TokenCheck {
  const promote = row.nextTokenHash === presentedHash && row.nextTokenExpiresAt !== null;
  const expiresAt = promote ? (row.nextTokenExpiresAt ?? 0) : row.tokenExpiresAt;
  if (expiresAt <= now) return { ok: false, error: "runner token expired: register the runner again" };
  return { ok: true, promote, expiresAt, rotate: expiresAt - now < ttlMs / 2 };
}

/**
 * A rotation asked from another address than the one the runner was last seen at: `from` the rotation's,
 * `before` the one seen before it. A runner that moved explains it; otherwise its token was stolen and is
 * rotating itself out of the real runner's hands.
 */
export type SuspectRotation = { at: number; from: string; before: string };

/** The record of a rotation asked from `address` by a runner last seen at `before`, or null if unsuspicious. */
export function suspectRotation(
  before: string | null,
  address: string | null,
  now: number,
): SuspectRotation | null {
  if (before === null || address === null || before === address) return null;
  return { at: now, from: address, before };
}

/**
 * What the holder of a token a rotation replaced is told: plainly that, and what to do if the rotation was
 * not its own (the runner's name is the caller's already: it held the token).
 */
export function supersededTokenError(runnerId: string, supersededAt: number | null): string {
  const when = supersededAt === null ? "" : ` at ${new Date(supersededAt).toISOString()}`;
  return `runner token superseded: runner ${runnerId} rotated its token${when} and uses the new one; if this runner did not rotate it, its token was stolen: have the operator revoke ${runnerId} (conveyor runner revoke ${runnerId}) and register this runner again`;
}

/**
 * The projects a claim may take jobs from: what the runner asked for, within what its registration bound
 * it to. `undefined` is every registered project; an empty list is none.
 */
export function claimScope(
  bound: readonly string[] | null,
  requested: readonly string[] | undefined,
): readonly string[] | undefined {
  if (bound === null) return requested;
  if (requested === undefined) return bound;
  return requested.filter((project) => bound.includes(project));
}
