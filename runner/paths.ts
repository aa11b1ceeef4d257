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

  /**
   * The runner id and token from the one-time registration (mode 0600), under a name no one gives a config
   * file: the old `runner.json` collided with the config many operators keep beside the work dir.
   */
  get identityFile(): string {
    return join(this.root, ".conveyor-runner-identity.json");
  }

  /** Where runners before 0.2 kept the identity; moved to `identityFile` when it really is one. */
  get legacyIdentityFile(): string {
    return join(this.root, "runner.json");
  }

  /** Claude Code's execute-only copy that sessions run (sandbox/controller.ts). */
  get controllerDir(): string {
    return join(this.root, "bin");
  }

  get lockFile(): string {
    return join(this.root, "runner.lock");
  }

  /** One empty file per issue whose worktree this runner holds, named by the contract's `issueRef`. */
  get heldDir(): string {
    return join(this.root, "held");
  }

  /**
   * One directory per issue for what its sessions own: `home/` (the agent's HOME, with its Claude
   * transcripts, so `resume` finds them) and `phase/` (the phase file). A sandbox sees its own issue's only.
   */
  get agentsDir(): string {
    return join(this.root, "agents");
  }

  /** What one agent run (no issue's) owns besides its worktree: removed when the run ends. */
  agentRunDir(project: string, runId: string): string {
    return join(this.root, "agent-homes", `${project}-${runId}`);
  }

  /** The run's own HOME. */
  agentRunHome(project: string, runId: string): string {
    return join(this.agentRunDir(project, runId), "home");
  }

  /** A review run's context files, beside its HOME and out of the session's reach but read-only. */
  agentRunContext(project: string, runId: string): string {
    return join(this.agentRunDir(project, runId), "context");
  }

  agentDir(project: string, issueNumber: number): string {
    return join(this.agentsDir, `${project}-${issueNumber}`);
  }

  agentHome(project: string, issueNumber: number): string {
    return join(this.agentDir(project, issueNumber), "home");
  }

  /** Outside the worktree, so the agent cannot commit it and a stale one never rides along in a branch. */
  phaseFile(project: string, issueNumber: number): string {
    return join(this.agentDir(project, issueNumber), "phase", "PHASE");
  }

  /**
   * An action job's steps: the checkout of the formula's commit they run from and their HOMEs. The runner's
   * own, out of every session's sandbox; removed when the job's session ends.
   */
  stepsDir(project: string, issueNumber: number): string {
    return join(this.root, "steps", `${project}-${issueNumber}`);
  }

  /** The session the issue's last job started here, with that job's id (see job.ts). */
  sessionFile(project: string, issueNumber: number): string {
    return join(this.root, "sessions", `${project}-${issueNumber}`);
  }
}
