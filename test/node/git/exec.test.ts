import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GitError, git, redact } from "../../../runner/git/exec.ts";
import { tempDir } from "./support.ts";

describe("redact", () => {
  it.each([
    ["https://user:secret@host/x.git", "https://user:***@host/x.git"],
    ["fatal: 'http://bot:t0k3n@127.0.0.1:8080/r' failed", "fatal: 'http://bot:***@127.0.0.1:8080/r' failed"],
    ["https://:secret@host", "https://:***@host"],
    ["a https://u:p@h and b ssh://u:q@h", "a https://u:***@h and b ssh://u:***@h"],
    ["https://user@host/x.git", "https://user@host/x.git"],
    ["https://host:8443/x.git", "https://host:8443/x.git"],
    ["no url: user:secret@host", "no url: user:secret@host"],
  ])("%s", (text, expected) => {
    expect(redact(text)).toBe(expected);
  });
});

describe("git", () => {
  let root = "";
  beforeAll(async () => {
    root = await tempDir("exec");
    await git(["init", "--quiet", join(root, "repo")]);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("returns stdout", async () => {
    expect(await git(["rev-parse", "--is-inside-work-tree"], { cwd: join(root, "repo") })).toBe("true\n");
  });

  it("throws the command, the exit code and stderr", async () => {
    const error = await git(["rev-parse", "--verify", "nope"], { cwd: join(root, "repo") }).catch((e) => e);
    expect(error).toBeInstanceOf(GitError);
    expect(error.exitCode).toBe(128);
    expect(error.message).toMatch(
      /^git rev-parse --verify nope failed \(exit 128\): fatal: Needed a single revision/,
    );
  });

  it("redacts credentials in the command and leaves -c values out of the message", async () => {
    const url = "http://bot:hunter2@127.0.0.1:9/repo.git";
    const error = await git(["-c", "http.lowSpeedTime=1", "ls-remote", url]).catch((e) => e);
    expect(error).toBeInstanceOf(GitError);
    expect(error.message).toContain("git ls-remote http://bot:***@127.0.0.1:9/repo.git failed");
    expect(`${error.message} ${error.stderr}`).not.toContain("hunter2");
    expect(error.message).not.toContain("lowSpeedTime");
  });

  it("reports a failure to start git", async () => {
    const error = await git(["status"], { cwd: join(root, "missing") }).catch((e) => e);
    expect(error).toBeInstanceOf(GitError);
    expect(error.exitCode).toBeNull();
    expect(error.message).toContain(`cwd: ${join(root, "missing")}`);
  });

  it("ignores an inherited GIT_DIR and the user's config", async () => {
    const saved = { dir: process.env.GIT_DIR, params: process.env.GIT_CONFIG_PARAMETERS };
    process.env.GIT_DIR = join(root, "elsewhere");
    process.env.GIT_CONFIG_PARAMETERS = "'user.name'='Intruder'";
    try {
      const cwd = join(root, "repo");
      expect(await git(["rev-parse", "--absolute-git-dir"], { cwd })).toBe(`${join(root, "repo", ".git")}\n`);
      expect(await git(["config", "--list", "--show-scope"], { cwd })).not.toMatch(
        /^(global|system|command)/m,
      );
    } finally {
      restore("GIT_DIR", saved.dir);
      restore("GIT_CONFIG_PARAMETERS", saved.params);
    }
  });

  it("adds the caller's environment", async () => {
    const out = await git(["var", "GIT_AUTHOR_IDENT"], {
      cwd: join(root, "repo"),
      env: { GIT_AUTHOR_NAME: "Ada", GIT_AUTHOR_EMAIL: "ada@example.test" },
    });
    expect(out).toMatch(/^Ada <ada@example\.test> /);
  });
});

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
