/**
 * Whether a pull request's changes need a human's approval before a merge, from the forge's own list of its
 * files. Pure. Fails closed: whatever the list cannot show plainly waits for a human.
 */
import { minimatch } from "minimatch";

/**
 * CI configuration, workflows, lockfiles, and what steers agents and the repository's tooling (agent
 * instructions and settings, MCP servers, git attributes and submodules, code owners): changes an agent must
 * not merge on its own.
 */
export const DEFAULT_PROTECTED_PATHS = [
  ".github/workflows/**",
  ".github/actions/**",
  ".woodpecker*",
  ".woodpecker/**",
  ".forgejo/workflows/**",
  ".gitea/workflows/**",
  ".gitlab-ci.yml",
  ".ci/**",
  "**/package-lock.json",
  "**/npm-shrinkwrap.json",
  "**/yarn.lock",
  "**/pnpm-lock.yaml",
  "**/bun.lockb",
  "**/bun.lock",
  "**/Cargo.lock",
  "**/go.sum",
  "**/poetry.lock",
  "**/Gemfile.lock",
  "**/composer.lock",
  "**/.claude/**",
  "**/CLAUDE.md",
  "**/CLAUDE.local.md",
  "**/.mcp.json",
  "**/AGENTS.md",
  "**/.gitattributes",
  ".gitmodules",
  "CODEOWNERS",
  ".github/CODEOWNERS",
  "docs/CODEOWNERS",
  ".gitea/CODEOWNERS",
  ".forgejo/CODEOWNERS",
];

/**
 * Conveyor's own configuration: agent definitions (the reviewer that decides merges, agents with triggers and
 * label outputs), action formulas (step commands, secrets, hosts, what is dangerous) and the vault's policy,
 * all read from the default branch that Conveyor's merges write. Always protected, whatever `protectedPaths`
 * says: no setting removes it.
 */
export const ALWAYS_PROTECTED_PATHS = [".conveyor/**"] as const;

/** One file as the forge lists it (see the forge client's `ChangedFile`). */
export type ListedFile = {
  path: string;
  previousPath: string | null;
  status: string;
  additions: number;
  deletions: number;
};

/** The forge's answer: its file list (`complete` false when it was cut short), or why it gave none. */
export type FileListing = { files: readonly ListedFile[]; complete: boolean } | { error: string };

/** Statuses whose files carry their change in their lines: anything else is a change nobody can read. */
const LINE_STATUSES = new Set(["added", "modified", "changed"]);
/** Statuses that are whole-file moves or removals: no lines to read, nothing hidden in them. */
const MOVE_STATUSES = new Set(["removed", "deleted", "renamed", "copied"]);

const SHOWN = 5;
const names = (paths: readonly string[]) =>
  paths.length > SHOWN
    ? `${paths.slice(0, SHOWN).join(", ")} and ${paths.length - SHOWN} more`
    : paths.join(", ");

/**
 * Why a human must approve the merge, or null: `globs` (the project's `protectedPaths`) and
 * `ALWAYS_PROTECTED_PATHS` guard paths. Both sides of a rename count. A file changed without a line
 * to show (binary, mode only) or with a status this code does not know cannot be judged from the list.
 */
export function approvalReason(listing: FileListing, globs: readonly string[]): string | null {
  if ("error" in listing) return `the forge's list of changed files could not be read: ${listing.error}`;
  if (!listing.complete) return "the forge's list of changed files is incomplete";
  const touched = listing.files.flatMap((f) => [f.path, ...(f.previousPath ? [f.previousPath] : [])]);
  const guarded = [...new Set(protectedFiles(touched, [...ALWAYS_PROTECTED_PATHS, ...globs]))];
  if (guarded.length > 0) return `touches protected paths: ${names(guarded)}`;
  const unreadable = listing.files
    .filter((f) =>
      MOVE_STATUSES.has(f.status) ? false : !LINE_STATUSES.has(f.status) || f.additions + f.deletions === 0,
    )
    .map((f) => f.path);
  if (unreadable.length > 0)
    return `changes files without readable lines (binary, mode or unknown): ${names(unreadable)}`;
  return null;
}

export function protectedFiles(files: readonly string[], globs: readonly string[]): string[] {
  return files.filter((file) => globs.some((glob) => minimatch(file, glob, { dot: true })));
}
