import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrateIdentity } from "../../../runner/identity.ts";
import { WorkDirLayout } from "../../../runner/paths.ts";

let layout: WorkDirLayout;

beforeEach(async () => {
  layout = new WorkDirLayout(await mkdtemp(join(tmpdir(), "conveyor-identity-")));
});
afterEach(() => rm(layout.root, { recursive: true, force: true }));

const identity = { runnerId: "runner-1a2b", token: "cvrun_abc" };
const config = { workerUrl: "https://conveyor.example", registrationToken: "cvreg_x", workDir: "." };
const files = async () => (await readdir(layout.root)).sort();

describe("the runner's identity file", () => {
  it("has a name no one gives a config", () => {
    expect(layout.identityFile).toBe(join(layout.root, ".conveyor-runner-identity.json"));
  });

  it("an identity under the old name runner.json moves to the new one", async () => {
    await writeFile(layout.legacyIdentityFile, JSON.stringify(identity), { mode: 0o600 });
    expect(await migrateIdentity(layout.legacyIdentityFile, layout.identityFile)).toBe(true);
    expect(await files()).toEqual([".conveyor-runner-identity.json"]);
    expect(JSON.parse(await readFile(layout.identityFile, "utf8"))).toEqual(identity);
  });

  it.each([
    ["a config", JSON.stringify(config)],
    ["a config that also names a runner", JSON.stringify({ ...identity, workerUrl: "https://x" })],
    ["not JSON", "workerUrl = x"],
  ])("%s named runner.json stays where it is, untouched", async (_, text) => {
    await writeFile(layout.legacyIdentityFile, text);
    expect(await migrateIdentity(layout.legacyIdentityFile, layout.identityFile)).toBe(false);
    expect(await files()).toEqual(["runner.json"]);
    expect(await readFile(layout.legacyIdentityFile, "utf8")).toBe(text);
  });

  it("an identity already under the new name wins; the old file is left alone", async () => {
    await writeFile(layout.identityFile, JSON.stringify(identity));
    await writeFile(layout.legacyIdentityFile, JSON.stringify({ runnerId: "old", token: "old" }));
    expect(await migrateIdentity(layout.legacyIdentityFile, layout.identityFile)).toBe(false);
    expect(JSON.parse(await readFile(layout.identityFile, "utf8"))).toEqual(identity);
    expect(await files()).toEqual([".conveyor-runner-identity.json", "runner.json"]);
  });

  it("nothing to move when there is no old file", async () => {
    expect(await migrateIdentity(layout.legacyIdentityFile, layout.identityFile)).toBe(false);
    expect(await files()).toEqual([]);
  });
});
