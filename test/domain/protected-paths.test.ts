import { describe, expect, it } from "vitest";
import { changedFiles, DEFAULT_PROTECTED_PATHS, protectedFiles } from "../../src/domain/protected-paths.ts";

const diff = [
  "diff --git a/src/app.ts b/src/app.ts",
  "index 1111111..2222222 100644",
  "--- a/src/app.ts",
  "+++ b/src/app.ts",
  "@@ -1 +1 @@",
  "-a",
  "+b",
  "diff --git a/new file.md b/new file.md",
  "new file mode 100644",
  "--- /dev/null",
  "+++ b/new file.md",
  "diff --git a/old.ts b/renamed.ts",
  "similarity index 100%",
  "rename from old.ts",
  "rename to renamed.ts",
  "diff --git a/gone.ts b/gone.ts",
  "deleted file mode 100644",
  "--- a/gone.ts",
  "+++ /dev/null",
].join("\r\n");

describe("changedFiles", () => {
  it("names every side of every change once: edits, additions, renames, deletions", () => {
    expect(changedFiles(diff)).toEqual(["src/app.ts", "new file.md", "old.ts", "renamed.ts", "gone.ts"]);
  });

  it("is empty for an empty diff", () => {
    expect(changedFiles("")).toEqual([]);
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
