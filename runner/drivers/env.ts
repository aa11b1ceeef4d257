import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** What the agent's environment is built from; the runner's own secrets are deliberately not part of it. */
export type AgentEnvSettings = {
  home: string;
  claudeConfigDir: string;
  anthropic: { baseUrl?: string; apiKey?: string };
};

/**
 * The session's complete environment: nothing is inherited from the runner's (no runner token, no git
 * credential, no cloud keys), only what tools and the model need. The API key is the one secret it holds.
 */
export function agentEnv(settings: AgentEnvSettings, phaseFile: string): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: settings.home,
    CLAUDE_CONFIG_DIR: settings.claudeConfigDir,
    CONVEYOR_PHASE_FILE: phaseFile,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  };
  if (settings.anthropic.baseUrl) env.ANTHROPIC_BASE_URL = settings.anthropic.baseUrl;
  if (settings.anthropic.apiKey) env.ANTHROPIC_API_KEY = settings.anthropic.apiKey;
  return env;
}

/**
 * The agent's HOME holds one file of ours: a git identity, so that the agent can commit although nothing is
 * written to the worktree's (shared) git config.
 */
export async function prepareAgentHome(home: string, author: { name: string; email: string }): Promise<void> {
  await mkdir(home, { recursive: true });
  await writeFile(join(home, ".gitconfig"), `[user]\n\tname = ${author.name}\n\temail = ${author.email}\n`);
}
