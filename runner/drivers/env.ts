import { mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Place } from "../sandbox/session-sandbox.ts";
import type { SessionInput } from "./driver.ts";

/**
 * The session's environment before the sandbox adds the model endpoint: nothing is inherited from the
 * runner's (no runner token, no git credential, no cloud keys), only what tools need. The model's key is
 * never part of it: the session gets a token for the runner's model proxy instead.
 */
export function agentEnv(input: Pick<SessionInput, "home" | "phaseFile">): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: input.home,
    CLAUDE_CONFIG_DIR: join(input.home, ".claude"),
    CONVEYOR_PHASE_FILE: input.phaseFile,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  };
}

/** What the session's processes may see: its worktree, its issue's HOME and phase directory, borrowed objects. */
export function sessionPlace(input: SessionInput): Place {
  return {
    worktree: input.worktree,
    writable: [input.home, dirname(input.phaseFile)],
    readOnly: input.readOnly,
  };
}

/**
 * The agent's HOME holds one file of ours, written before every session: a git identity, so that the agent
 * can commit although nothing is written to the worktree's git config. The last session may have left a
 * symlink there: it is replaced, never written through.
 */
export async function prepareAgentHome(home: string, author: { name: string; email: string }): Promise<void> {
  await mkdir(home, { recursive: true });
  const file = join(home, ".gitconfig");
  await rm(file, { recursive: true, force: true });
  await writeFile(file, `[user]\n\tname = ${author.name}\n\temail = ${author.email}\n`, { flag: "wx" });
}
