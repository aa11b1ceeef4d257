/** Operator commands in forge comments: the first non-empty line, `/conveyor <verb>`. Pure. */
export const COMMANDS = ["retry", "abandon"] as const;
export type Command = (typeof COMMANDS)[number];

export type ParsedComment =
  | { kind: "command"; command: Command }
  | { kind: "unknown_command"; verb: string }
  /** Not a command: text a human wrote (a reply, when the issue waits for one). */
  | { kind: "text" };

export function parseComment(body: string): ParsedComment {
  const first =
    body
      .split(/\r?\n/)
      .find((line) => line.trim() !== "")
      ?.trim() ?? "";
  const match = /^\/conveyor(?:\s+(\S+))?(?=\s|$)/i.exec(first);
  if (!match) return { kind: "text" };
  const verb = (match[1] ?? "").toLowerCase();
  const command = COMMANDS.find((c) => c === verb);
  return command ? { kind: "command", command } : { kind: "unknown_command", verb };
}

/** Forge labels that act as commands. */
export const ABANDON_LABEL = "loop:abandon";
