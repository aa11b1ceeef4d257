import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, rootRefusal } from "../../../runner/config.ts";
import { Logger, type LogLevel } from "../../../runner/log.ts";
import { Secrets } from "../../../runner/redact.ts";
import { tempDir } from "../git/support.ts";

let file = "";
let tokenFile = "";

beforeAll(async () => {
  file = join(await tempDir("runner-config"), "runner.json");
  tokenFile = join(file, "../git-token");
  await writeFile(tokenFile, "from-token-file\n", { mode: 0o600 });
  await writeFile(
    file,
    JSON.stringify({
      workerUrl: "https://conveyor.example.com",
      workDir: "/var/lib/conveyor",
      concurrency: 2,
      anthropic: { apiKey: "sk-ant-from-file", model: "claude-test" },
      git: { username: "bot", token: "from-file" },
    }),
  );
});

describe("loadConfig", () => {
  it("layers flags over the environment over the file", () => {
    const config = loadConfig(["--config", file, "--concurrency", "4", "--git-token-file", tokenFile], {
      CONVEYOR_CONCURRENCY: "3",
      CONVEYOR_LOG_LEVEL: "debug",
      ANTHROPIC_API_KEY: "sk-ant-from-env",
    });
    expect(config).toMatchObject({
      workerUrl: "https://conveyor.example.com",
      workDir: "/var/lib/conveyor",
      concurrency: 4,
      logLevel: "debug",
      driver: "claude",
      git: { username: "bot", token: "from-token-file" },
      anthropic: { apiKey: "sk-ant-from-env", model: "claude-test" },
      shutdownGraceMs: 300_000,
      claimWaitMs: 20_000,
      unsafeNoSandbox: false,
    });
    // Both hold secrets: sessions' sandboxes mask them wherever the system view would show them.
    expect(config.secretFiles).toEqual([file, tokenFile]);
  });

  it("takes secrets from files named in the environment or the config file, never from flags", async () => {
    const keyFile = join(file, "../model-key");
    await writeFile(keyFile, "sk-ant-from-key-file\n");
    const withFiles = join(file, "../with-files.json");
    await writeFile(
      withFiles,
      JSON.stringify({
        workerUrl: "https://c.example.com",
        workDir: "/w",
        git: { username: "bot", tokenFile },
      }),
    );
    const config = loadConfig(["--config", withFiles, "--unsafe-no-sandbox"], {
      ANTHROPIC_API_KEY_FILE: keyFile,
    });
    expect(config).toMatchObject({
      git: { username: "bot", token: "from-token-file" },
      anthropic: { apiKey: "sk-ant-from-key-file" },
      unsafeNoSandbox: true,
    });
    expect(() => loadConfig(["--config", file, "--git-token", "on-the-command-line"], {})).toThrow(
      "Unknown option '--git-token'",
    );
    expect(() => loadConfig(["--config", file, "--git-token-file", "/nonexistent"], {})).toThrow(
      /^git\.token: cannot read \/nonexistent: ENOENT/,
    );
  });

  it("reads everything from the environment alone", () => {
    const config = loadConfig([], {
      CONVEYOR_WORKER_URL: "http://127.0.0.1:8787",
      CONVEYOR_WORK_DIR: "work",
      CONVEYOR_DRIVER: "scripted",
      CONVEYOR_SCRIPT: "demo.json",
      CONVEYOR_REGISTRATION_TOKEN: "reg-0123456789abcdef",
    });
    expect(config).toMatchObject({
      driver: "scripted",
      registrationToken: "reg-0123456789abcdef",
      concurrency: 1,
    });
    expect(config.workDir).toBe(join(process.cwd(), "work"));
    expect(config.script).toBe(join(process.cwd(), "demo.json"));
  });

  it.each([
    [["--driver", "claude"], {}, "invalid config: workerUrl: required; workDir: required"],
    [
      ["--config", "/nonexistent.json"],
      {},
      "cannot read config file /nonexistent.json: ENOENT: no such file or directory, open '/nonexistent.json'",
    ],
    [["--bogus"], {}, "Unknown option '--bogus'"],
    [
      ["--driver", "claude"],
      { CONVEYOR_WORKER_URL: "http://w", CONVEYOR_WORK_DIR: "/w" },
      "invalid config: anthropic.apiKey: required by the claude driver (or anthropic.oauthToken, a Claude subscription's)",
    ],
    [
      ["--driver", "claude"],
      {
        CONVEYOR_WORKER_URL: "http://w",
        CONVEYOR_WORK_DIR: "/w",
        ANTHROPIC_API_KEY: "sk-ant-key",
        CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-token",
      },
      "invalid config: anthropic.apiKey: give anthropic.apiKey or anthropic.oauthToken, not both",
    ],
    [
      ["--concurrency", "0", "--driver", "scripted"],
      { CONVEYOR_WORKER_URL: "ftp://x", CONVEYOR_WORK_DIR: "/w" },
      "invalid config: workerUrl: Invalid URL; concurrency: Too small: expected number to be >=1; script: required by the scripted driver",
    ],
  ])("refuses %j %j in one line", (argv, env, message) => {
    expect(() => loadConfig(argv, env)).toThrow(new ConfigError(message));
  });

  it("takes a Claude subscription's OAuth token instead of an API key", () => {
    const config = loadConfig(["--driver", "claude"], {
      CONVEYOR_WORKER_URL: "http://w",
      CONVEYOR_WORK_DIR: "/w",
      CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-token",
    });
    expect(config.anthropic).toEqual({ oauthToken: "sk-ant-oat01-token" });
  });

  it("starts as root only when told so: by a flag, the environment or the file", async () => {
    const base = { CONVEYOR_WORKER_URL: "http://w", CONVEYOR_WORK_DIR: "/w", CONVEYOR_DRIVER: "scripted" };
    const args = ["--script", "s.json"];
    expect(loadConfig(args, base).allowRoot).toBe(false);
    expect(loadConfig([...args, "--allow-root"], base).allowRoot).toBe(true);
    expect(loadConfig(args, { ...base, CONVEYOR_ALLOW_ROOT: "1" }).allowRoot).toBe(true);
    expect(loadConfig(args, { ...base, CONVEYOR_ALLOW_ROOT: "0" }).allowRoot).toBe(false);
    const allowing = join(file, "../allow-root.json");
    await writeFile(allowing, JSON.stringify({ allowRoot: true }));
    expect(loadConfig(["--config", allowing, ...args], base).allowRoot).toBe(true);

    expect(rootRefusal(0, false)).toMatch(/^refusing to run as root: .* --allow-root/);
    expect(rootRefusal(0, true)).toBeNull();
    expect(rootRefusal(1000, false)).toBeNull();
  });

  it("refuses unknown keys in the file", async () => {
    const typo = join(file, "../typo.json");
    await writeFile(
      typo,
      JSON.stringify({ workerUrl: "https://c.example.com", workDir: "/w", concurency: 2 }),
    );
    expect(() => loadConfig(["--config", typo, "--driver", "scripted", "--script", "s.json"], {})).toThrow(
      'invalid config: config: Unrecognized key: "concurency"',
    );
  });
});

describe("redaction", () => {
  const secrets = new Secrets();
  secrets.add("runner-token-abcdef", "short", undefined);

  it("hides known secrets, bearer tokens, API keys and URL credentials", () => {
    expect(
      secrets.redact(
        "token runner-token-abcdef, Authorization: Bearer eyJhbGci.x-y, key sk-ant-api03-XyZ_1, " +
          "https://bot:ghp_secret@forge.example.com/a.git, short",
      ),
    ).toBe(
      "token ***, Authorization: Bearer ***, key sk-ant-***, https://bot:***@forge.example.com/a.git, short",
    );
  });

  it("applies to every log line and every forwarded line; only info and above are forwarded", () => {
    const lines: string[] = [];
    const forwarded: [LogLevel, string][] = [];
    const log = new Logger({ level: "warn", secrets, write: (line) => lines.push(line) }).child(
      { job: "j" },
      (level, message) => forwarded.push([level, message]),
    );
    log.debug("debug runner-token-abcdef");
    log.info("pushed", { url: "https://bot:pw@forge.example.com/x.git" });
    log.warn("failed", { error: new Error("Bearer abc.def") });

    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { time: expect.any(String), level: "warn", msg: "failed", job: "j", error: "Bearer ***" },
    ]);
    expect(forwarded).toEqual([
      ["info", 'pushed {"url":"https://bot:***@forge.example.com/x.git"}'],
      ["warn", 'failed {"error":"Bearer ***"}'],
    ]);
  });
});
