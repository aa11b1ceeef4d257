/** runner/conveyor-runner.service as systemd reads it: `systemd-analyze verify` accepts it without a word. */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const UNIT = new URL("../../../runner/conveyor-runner.service", import.meta.url).pathname;
const ANALYZE = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].find((path) => existsSync(path));

if (!ANALYZE)
  console.warn(
    "systemd-analyze is not installed (Debian: apt-get install systemd): the unit is not verified",
  );

function verify(unit: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      ANALYZE ?? "systemd-analyze",
      ["verify", "--man=no", unit],
      { cwd: tmpdir() },
      (error, _, stderr) => resolve({ code: error ? Number(error.code) : 0, stderr }),
    );
  });
}

describe.skipIf(!ANALYZE)("the runner's systemd unit", () => {
  it("systemd-analyze verify accepts it, without a warning", async () => {
    expect(await verify(UNIT)).toEqual({ code: 0, stderr: "" });
  });

  it("the check is real: a misspelt directive is reported", async () => {
    const dir = await mkdtemp(join(tmpdir(), "conveyor-unit-"));
    try {
      const broken = join(dir, "conveyor-runner.service");
      await writeFile(broken, (await readFile(UNIT, "utf8")).replace("ProtectSystem=", "ProtectSystm="));
      expect((await verify(broken)).stderr).toMatch(/Unknown key '?ProtectSystm'? in section/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("the unit's settings", () => {
  it("documents itself with the README the package installs, where npm's global prefix puts it", async () => {
    const [documentation] = (await settings()).filter((line) => line.startsWith("Documentation="));
    const uris = documentation?.slice("Documentation=".length).split(" ") ?? [];
    expect(uris).toEqual([
      "file:/usr/local/lib/node_modules/conveyor/runner/README.md",
      "file:/usr/lib/node_modules/conveyor/runner/README.md",
    ]);
    const { files } = JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8"));
    expect(files).toContain("runner/README.md");
  });

  const settings = async () =>
    (await readFile(UNIT, "utf8")).split("\n").filter((line) => /^[A-Z]\w*=/.test(line));

  it("runs as its own user in a read-only system, with a state directory for the work dir", async () => {
    expect(await settings()).toEqual(
      expect.arrayContaining([
        "DynamicUser=yes",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "NoNewPrivileges=yes",
        "StateDirectory=conveyor-runner",
        "Environment=CONVEYOR_WORK_DIR=%S/conveyor-runner",
      ]),
    );
  });

  it("gets its tokens as credentials, read through *_FILE: no secret on the command line or in the environment", async () => {
    const lines = await settings();
    for (const [name, variable] of [
      ["registration-token", "CONVEYOR_REGISTRATION_TOKEN_FILE"],
      ["git-token", "CONVEYOR_GIT_TOKEN_FILE"],
      ["anthropic-api-key", "ANTHROPIC_API_KEY_FILE"],
    ]) {
      expect(lines).toContain(`LoadCredential=${name}:/etc/conveyor-runner/${name}`);
      expect(lines).toContain(`Environment=${variable}=%d/${name}`);
    }
    const execStart = lines.filter((line) => line.startsWith("ExecStart="));
    expect(execStart).toEqual(["ExecStart=/usr/bin/env conveyor-runner"]);
    expect(lines.filter((l) => /^Environment=.*(TOKEN|KEY)=(?!%d\/)/.test(l))).toEqual([]);
  });
});
