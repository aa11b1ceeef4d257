import { describe, expect, it } from "vitest";
import {
  approvalReason,
  DEFAULT_PROTECTED_PATHS,
  type FileListing,
  type ListedFile,
  protectedFiles,
} from "../../src/domain/protected-paths.ts";

const file = (
  path: string,
  status = "modified",
  lines = 1,
  previousPath: string | null = null,
): ListedFile => ({
  path,
  previousPath,
  status,
  additions: lines,
  deletions: 0,
});
const listed = (...files: ListedFile[]): FileListing => ({ files, complete: true });
const reason = (listing: FileListing) => approvalReason(listing, DEFAULT_PROTECTED_PATHS);

describe("approvalReason", () => {
  it("is null for plain line changes outside protected paths: edits, additions, renames, removals", () => {
    expect(
      reason(
        listed(
          file("src/app.ts"),
          file("new file.md", "added", 3),
          file("renamed.ts", "renamed", 0, "old.ts"),
          file("gone.ts", "removed", 0),
          file("gone-on-gitea.ts", "deleted", 0),
          file("copy.ts", "copied", 0, "src/app.ts"),
          file("docs/guide.md", "changed", 2),
        ),
      ),
    ).toBeNull();
  });

  it.each<[string, ListedFile]>([
    ["a binary lockfile (no lines)", file("bun.lockb", "modified", 0)],
    ["a NUL byte added to .ci/run (binary on Gitea)", file(".ci/run", "unchanged", 0)],
    ["a mode-only change of .ci/run (GitHub)", file(".ci/run", "changed", 0)],
    ["a path git would C-quote", file('.ci/täst "x".sh')],
    ["a rename out of a protected path", file("ci-run", "renamed", 0, ".ci/run")],
    ["agent instructions", file("CLAUDE.md")],
    ["agent settings", file(".claude/settings.json", "added")],
    ["MCP servers", file(".mcp.json")],
    ["AGENTS.md in a package", file("packages/web/AGENTS.md")],
    ["git attributes", file(".gitattributes")],
    ["submodules", file(".gitmodules")],
    ["code owners", file(".github/CODEOWNERS")],
  ])("%s → touches protected paths", (_name, changed) => {
    expect(reason(listed(file("src/app.ts"), changed))).toMatch(/^touches protected paths: /);
  });

  it.each<[string, ListedFile]>([
    ["an agent definition", file(".conveyor/agents/reviewer.md", "added")],
    ["a formula", file(".conveyor/formulas/rotate.toml")],
    ["the vault's policy", file(".conveyor/vault-policy.md")],
    ["a rename out of .conveyor/", file("notes/reviewer.md", "renamed", 0, ".conveyor/agents/reviewer.md")],
  ])("%s waits for a human even where protectedPaths is empty", (_name, changed) => {
    expect(approvalReason(listed(file("src/app.ts"), changed), [])).toMatch(
      /^touches protected paths: .*\.conveyor\//,
    );
  });

  it.each<[string, ListedFile]>([
    ["a binary file", file("assets/logo.png", "modified", 0)],
    ["a mode-only change", file("scripts/run.sh", "changed", 0)],
    ["Gitea's unchanged", file("scripts/run.sh", "unchanged", 0)],
    ["a status nobody knows", file("src/app.ts", "retyped", 4)],
  ])("%s → a human looks", (_name, changed) => {
    expect(reason(listed(changed))).toBe(
      `changes files without readable lines (binary, mode or unknown): ${changed.path}`,
    );
  });

  it("fails closed on a cut list and on no list", () => {
    expect(reason({ files: [file("src/app.ts")], complete: false })).toBe(
      "the forge's list of changed files is incomplete",
    );
    expect(reason({ error: "forge answered 500" })).toBe(
      "the forge's list of changed files could not be read: forge answered 500",
    );
  });

  it("names at most five paths", () => {
    const many = Array.from({ length: 7 }, (_, i) => file(`.ci/step-${i}`));
    expect(reason(listed(...many))).toBe(
      "touches protected paths: .ci/step-0, .ci/step-1, .ci/step-2, .ci/step-3, .ci/step-4 and 2 more",
    );
  });
});

describe("protectedFiles with the defaults", () => {
  it.each([
    [".github/workflows/ci.yml", true],
    [".woodpecker.yml", true],
    [".woodpecker/test.yaml", true],
    [".ci/run", true],
    ["package-lock.json", true],
    ["packages/web/package-lock.json", true],
    ["Cargo.lock", true],
    [".claude/commands/x.md", true],
    ["CLAUDE.md", true],
    ["src/CLAUDE.md", true],
    [".mcp.json", true],
    ["AGENTS.md", true],
    [".gitattributes", true],
    [".gitmodules", true],
    ["CODEOWNERS", true],
    ["docs/CODEOWNERS", true],
    ["src/workflows/ci.ts", false],
    ["docs/.github/notes.md", false],
    ["package.json", false],
    ["src/app.ts", false],
  ])("%s → %s", (file, expected) => {
    expect(protectedFiles([file], DEFAULT_PROTECTED_PATHS)).toEqual(expected ? [file] : []);
  });

  it("uses a project's own globs", () => {
    expect(protectedFiles(["src/auth/login.ts", "src/app.ts"], ["src/auth/**"])).toEqual([
      "src/auth/login.ts",
    ]);
  });
});
