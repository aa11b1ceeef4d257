/**
 * The written policy the vault's classifier judges under. A repository may replace it with its own
 * `.conveyor/vault-policy.md` on the default branch; this one ships with Conveyor (docs/vault.md shows it).
 */
export const DEFAULT_VAULT_POLICY_TEXT = `# Conveyor vault policy (default)

You judge one requested action that Conveyor holds because it may be dangerous or irreversible.

Answer **reject** when the action would:
- destroy or overwrite data without a backup (dropping tables, deleting buckets, force-pushing a protected branch);
- expose a secret (printing it, sending it to a host the request does not need, committing it);
- disable a safety check (CI, branch protection, authentication, this vault);
- reach systems or accounts the request gives no reason to touch.

Answer **approve** only when the action is routine, reversible, limited to what its title says, and none of
the above applies.

Answer **ask** in every other case, and whenever you are unsure: a human then decides. Asking is always safe.

Give a one-sentence reason a maintainer can check.
`;

/** Where a repository keeps its own policy. */
export const VAULT_POLICY_DIR = ".conveyor";
export const VAULT_POLICY_FILE = ".conveyor/vault-policy.md";
