import { join } from "node:path";

/**
 * Where the runner keeps its state in the work dir, besides the git workspace (`mirrors/`, `worktrees/`). All
 * of it survives a restart: that is how a runner re-attaches to its issues after a crash.
 */
export class WorkDirLayout {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  /** The runner id and token from the one-time registration (mode 0600). */
  get identityFile(): string {
    return join(this.root, "runner.json");
  }

  get lockFile(): string {
    return join(this.root, "runner.lock");
  }

  /** `CLAUDE_CONFIG_DIR` of every session: transcripts must stay where `resume` finds them. */
  get claudeConfigDir(): string {
    return join(this.root, "claude");
  }

  /** The agent's `HOME`: not the runner user's, whose dotfiles may hold credentials. */
  get agentHome(): string {
    return join(this.root, "home");
  }

  /** One empty file per issue whose worktree this runner holds, named by the contract's `issueRef`. */
  get heldDir(): string {
    return join(this.root, "held");
  }

  /** Cumulative session totals already reported, per session id (see drivers/usage.ts). */
  get usageDir(): string {
    return join(this.root, "usage");
  }

  /** Where the phase files are; every agent process has one of them in its environment. */
  get phaseDir(): string {
    return join(this.root, "phase");
  }

  /** Outside the worktree, so the agent cannot commit it and a stale one never rides along in a branch. */
  phaseFile(project: string, issueNumber: number): string {
    return join(this.phaseDir, `${project}-${issueNumber}`);
  }

  /** The session the issue's last job started here, with that job's id (see job.ts). */
  sessionFile(project: string, issueNumber: number): string {
    return join(this.root, "sessions", `${project}-${issueNumber}`);
  }
}
