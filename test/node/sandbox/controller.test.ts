/** Claude Code's execute-only copy (runner/sandbox/controller.ts), on a small stand-in binary. */
import { chmod, mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executeOnlyCopy } from "../../../runner/sandbox/controller.ts";
import { tempDir } from "../git/support.ts";

let root = "";

beforeAll(async () => {
  root = await tempDir("controller-copy");
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("the execute-only copy of Claude Code", () => {
  it("is made once per binary, under its own name, executable and unreadable; an older one goes", async () => {
    const binary = join(root, "pkg", "claude");
    await mkdir(join(root, "pkg"));
    await writeFile(binary, "#!/bin/sh\necho one\n", { mode: 0o755 });
    const dir = join(root, "bin");

    const first = await executeOnlyCopy(binary, dir);
    expect(first.startsWith(`${dir}/claude-`) && first.endsWith("/claude")).toBe(true);
    expect((await stat(first)).mode & 0o777).toBe(0o111);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const made = (await stat(first)).mtimeMs;
    expect(await executeOnlyCopy(binary, dir)).toBe(first);
    expect((await stat(first)).mtimeMs).toBe(made);

    await writeFile(binary, "#!/bin/sh\necho two, an upgrade\n");
    const second = await executeOnlyCopy(binary, dir);
    expect(second).not.toBe(first);
    expect(await readdir(dir)).toEqual([second.split("/").at(-2)]);
  });

  it("refuses a directory that someone else could write", async () => {
    const dir = join(root, "shared");
    await mkdir(dir);
    await chmod(dir, 0o777);
    await expect(executeOnlyCopy(join(root, "pkg", "claude"), dir)).rejects.toThrow(
      /must be a directory of uid \d+ that no one else may write/,
    );
  });
});
