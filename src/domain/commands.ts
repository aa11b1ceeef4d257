/**
 * Operator commands in forge comments: the first non-empty line, `/conveyor <verb>`, and for the vault
 * `/conveyor approve <id>` / `/conveyor reject <id> [reason]`. Pure.
 */
import { parseVaultId } from "./vault.ts";

/**
 * `merge`: the change requests standing on the pull request hold its merge no more (a writer overrides them).
 * `accept`: carry out the step the triage proposed for the escalation (src/domain/escalation.ts).
 */
export const COMMANDS = ["retry", "abandon", "merge", "accept"] as const;
export type Command = (typeof COMMANDS)[number];
export const VAULT_COMMANDS = ["approve", "reject"] as const;
export type VaultCommand = (typeof VAULT_COMMANDS)[number];

/** A rejection's reason, as long as the vault keeps one. */
const MAX_REASON = 500;

export type ParsedComment =
  | { kind: "command"; command: Command }
  /** `id`: null when the comment names no valid vault item id (`v7`, or `7`). */
  | { kind: "vault"; command: VaultCommand; id: string | null; reason?: string }
  | { kind: "unknown_command"; verb: string }
  /** Not a command: text a human wrote (a reply, when the issue waits for one). */
  | { kind: "text" };

export function parseComment(body: string): ParsedComment {
  const first =
    body
      .split(/\r?\n/)
      .find((line) => line.trim() !== "")
      ?.trim() ?? "";
  const match = /^\/conveyor(?:\s+(\S+))?(?=\s|$)(.*)$/i.exec(first);
  if (!match) return { kind: "text" };
  const verb = (match[1] ?? "").toLowerCase();
  const vault = VAULT_COMMANDS.find((c) => c === verb);
  if (vault) {
    const [, idText = "", rest = ""] = /^\s*(\S*)\s*(.*)$/.exec(match[2] ?? "") ?? [];
    const reason = rest.trim().slice(0, MAX_REASON);
    return { kind: "vault", command: vault, id: parseVaultId(idText), ...(reason && { reason }) };
  }
  const command = COMMANDS.find((c) => c === verb);
  return command ? { kind: "command", command } : { kind: "unknown_command", verb };
}

/** Forge labels that act as commands. */
export const ABANDON_LABEL = "loop:abandon";
