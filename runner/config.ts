import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { projectIdSchema } from "../src/projects/config.ts";
import { MAX_CLAIM_WAIT_MS } from "../src/runner-api/contract.ts";
import { DEFAULT_PRESSURE_LIMITS, type PressureLimits } from "./backpressure.ts";
import { LOG_LEVELS } from "./log.ts";
import { readSecretFile } from "./secret-file.ts";

const MIB = 1024 ** 2;

/** A size in MiB, up to `maxMiB`, by default `defaultBytes`. */
const mebibytes = (maxMiB: number, defaultBytes: number) =>
  z.coerce
    .number()
    .int()
    .min(0)
    .max(maxMiB)
    .default(defaultBytes / MIB);

/** An on/off setting: `true`/`false` in the file, a bare flag, or `1`/`true`/`0`/`false` in the environment. */
const switchSchema = z
  .union([z.boolean(), z.enum(["1", "true", "0", "false"]).transform((v) => v === "1" || v === "true")])
  .default(false);

const configSchema = z
  .strictObject({
    workerUrl: z.url({ protocol: /^https?$/ }),
    /** One-time token for the first start; afterwards the runner token stored in the work dir is used. */
    registrationToken: z.string().min(16).max(200).optional(),
    /** A runner token issued before; takes precedence over the stored one. */
    runnerToken: z.string().min(1).optional(),
    name: z.string().min(1).max(100).default(hostname()),
    workDir: z
      .string()
      .min(1)
      .transform((dir) => resolve(dir)),
    concurrency: z.coerce.number().int().min(1).max(64).default(1),
    /** Take jobs of these projects only (comma-separated in flags and the environment); default: all. */
    projects: z
      .preprocess(
        (value) => (typeof value === "string" ? value.split(",").map((p) => p.trim()) : value),
        z.array(projectIdSchema).min(1).max(100),
      )
      .optional(),
    driver: z.enum(["claude", "scripted"]).default("claude"),
    /** The scripted driver's steps (JSON, see drivers/scripted.ts). */
    script: z
      .string()
      .min(1)
      .transform((file) => resolve(file))
      .optional(),
    /** Push (and fetch) credential, used by the credential helper only; never in the agent's environment. */
    git: z.strictObject({ username: z.string().min(1), token: z.string().min(1) }).optional(),
    anthropic: z
      .strictObject({
        baseUrl: z.url({ protocol: /^https?$/ }).optional(),
        apiKey: z.string().min(1).optional(),
        /** A Claude subscription instead of an API key: the token `claude setup-token` prints. */
        oauthToken: z.string().min(1).optional(),
        model: z.string().min(1).optional(),
      })
      .prefault({}),
    logLevel: z.enum(LOG_LEVELS).default("info"),
    /** How long running jobs may go on after SIGTERM before they are aborted. */
    shutdownGraceMs: z.coerce
      .number()
      .int()
      .min(0)
      .default(5 * 60_000),
    claimWaitMs: z.coerce.number().int().min(0).max(MAX_CLAIM_WAIT_MS).default(20_000),
    /** No new job while the host is past these (runner/backpressure.ts); 0 turns a check off. */
    backpressure: z
      .strictObject({
        minMemoryMiB: mebibytes(1024 ** 2, DEFAULT_PRESSURE_LIMITS.minMemoryBytes),
        minDiskMiB: mebibytes(1024 ** 3, DEFAULT_PRESSURE_LIMITS.minDiskBytes),
        maxLoadPerCpu: z.coerce.number().min(0).max(1_000).default(DEFAULT_PRESSURE_LIMITS.maxLoadPerCpu),
      })
      .prefault({}),
    /** Sessions without the bubblewrap sandbox: they see all the runner's user sees. Logged at every start. */
    unsafeNoSandbox: switchSchema,
    /** Start although this process is root (`rootRefusal`). Logged at every start. */
    allowRoot: switchSchema,
  })
  .superRefine((config, ctx) => {
    const credentials = [config.anthropic.apiKey, config.anthropic.oauthToken].filter(Boolean).length;
    if (config.driver === "claude" && credentials !== 1) {
      ctx.addIssue({
        code: "custom",
        path: ["anthropic", "apiKey"],
        message:
          credentials === 0
            ? "required by the claude driver (or anthropic.oauthToken, a Claude subscription's)"
            : "give anthropic.apiKey or anthropic.oauthToken, not both",
      });
    }
    if (config.driver === "scripted" && !config.script) {
      ctx.addIssue({ code: "custom", path: ["script"], message: "required by the scripted driver" });
    }
  });

/** The config's thresholds in the units the runner measures. */
export const pressureLimits = ({ backpressure }: RunnerConfig): PressureLimits => ({
  minMemoryBytes: backpressure.minMemoryMiB * MIB,
  minDiskBytes: backpressure.minDiskMiB * MIB,
  maxLoadPerCpu: backpressure.maxLoadPerCpu,
});

export type RunnerConfig = z.infer<typeof configSchema> & {
  /** The config file and the secret files it was read from: files a sandbox must not show. */
  secretFiles: string[];
};

/**
 * Each setting by its config-file key, command-line flag and environment variable. A secret has no flag of
 * its own (a command line is visible to every user of the host): its flag names a file that holds it
 * (`--git-token-file`), as may the config file (`git.tokenFile`) and the environment (`CONVEYOR_GIT_TOKEN_FILE`).
 */
const SETTINGS = [
  { key: "workerUrl", flag: "worker-url", env: "CONVEYOR_WORKER_URL" },
  {
    key: "registrationToken",
    flag: "registration-token-file",
    env: "CONVEYOR_REGISTRATION_TOKEN",
    secret: true,
  },
  { key: "runnerToken", flag: "runner-token-file", env: "CONVEYOR_RUNNER_TOKEN", secret: true },
  { key: "name", flag: "name", env: "CONVEYOR_RUNNER_NAME" },
  { key: "workDir", flag: "work-dir", env: "CONVEYOR_WORK_DIR" },
  { key: "concurrency", flag: "concurrency", env: "CONVEYOR_CONCURRENCY" },
  { key: "projects", flag: "projects", env: "CONVEYOR_PROJECTS" },
  { key: "driver", flag: "driver", env: "CONVEYOR_DRIVER" },
  { key: "script", flag: "script", env: "CONVEYOR_SCRIPT" },
  { key: "git.username", flag: "git-username", env: "CONVEYOR_GIT_USERNAME" },
  { key: "git.token", flag: "git-token-file", env: "CONVEYOR_GIT_TOKEN", secret: true },
  { key: "anthropic.baseUrl", flag: "anthropic-base-url", env: "ANTHROPIC_BASE_URL" },
  { key: "anthropic.apiKey", flag: "anthropic-api-key-file", env: "ANTHROPIC_API_KEY", secret: true },
  {
    key: "anthropic.oauthToken",
    flag: "anthropic-oauth-token-file",
    env: "CLAUDE_CODE_OAUTH_TOKEN",
    secret: true,
  },
  { key: "anthropic.model", flag: "anthropic-model", env: "ANTHROPIC_MODEL" },
  { key: "logLevel", flag: "log-level", env: "CONVEYOR_LOG_LEVEL" },
  { key: "shutdownGraceMs", flag: "shutdown-grace-ms", env: "CONVEYOR_SHUTDOWN_GRACE_MS" },
  { key: "claimWaitMs", flag: "claim-wait-ms", env: "CONVEYOR_CLAIM_WAIT_MS" },
  { key: "backpressure.minMemoryMiB", flag: "min-memory-mib", env: "CONVEYOR_MIN_MEMORY_MIB" },
  { key: "backpressure.minDiskMiB", flag: "min-disk-mib", env: "CONVEYOR_MIN_DISK_MIB" },
  { key: "backpressure.maxLoadPerCpu", flag: "max-load-per-cpu", env: "CONVEYOR_MAX_LOAD_PER_CPU" },
] as const;

/** Environment variables that carry secrets: the CLI removes them from its own environment once read. */
export const SECRET_ENV = SETTINGS.filter((s) => "secret" in s).flatMap((s) => [s.env, `${s.env}_FILE`]);

/** The switches: bare flags, `<NAME>=1` in the environment, booleans in the file. */
const SWITCHES = [
  { key: "unsafeNoSandbox", flag: "unsafe-no-sandbox", env: "CONVEYOR_UNSAFE_NO_SANDBOX" },
  { key: "allowRoot", flag: "allow-root", env: "CONVEYOR_ALLOW_ROOT" },
] as const;

export const USAGE = `usage: conveyor-runner [--config <file.json>] [--<setting> <value> ...] [--unsafe-no-sandbox] [--allow-root]
       conveyor-runner --version

The config file may also be named by CONVEYOR_CONFIG. Settings (flag > environment > config file key):
${SETTINGS.map((s) => {
  const secret = "secret" in s;
  return `  --${s.flag.padEnd(26)} ${`${s.env}${secret ? "[_FILE]" : ""}`.padEnd(36)} ${s.key}${secret ? "[File]" : ""}`;
}).join("\n")}
  --unsafe-no-sandbox          CONVEYOR_UNSAFE_NO_SANDBOX=1         unsafeNoSandbox: sessions without bubblewrap
  --allow-root                 CONVEYOR_ALLOW_ROOT=1                allowRoot: start although running as root
A secret is never a flag: --<secret>-file, <VARIABLE>_FILE and the config file's <key>File name a file holding it.`;

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Reads the config from a JSON file (`--config`), the environment and flags; throws a one-line `ConfigError`. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): RunnerConfig {
  const { values } = parseFlags(argv);
  const text = (flag: string) => (typeof values[flag] === "string" ? values[flag] : undefined);
  const file = text("config") ?? env.CONVEYOR_CONFIG;
  const raw: Record<string, unknown> = file === undefined ? {} : readConfigFile(file);
  const secretFiles = file === undefined ? [] : [resolve(file)];
  for (const setting of SETTINGS) {
    const { key, flag, env: name } = setting;
    if (!("secret" in setting)) {
      const value = text(flag) ?? env[name];
      if (value !== undefined && value !== "") setPath(raw, key, value);
      continue;
    }
    // Flag > environment > config file, as for every setting; each may name a file instead.
    const configFileKey = takePath(raw, `${key}File`);
    const direct = env[name];
    const file =
      text(flag) ??
      (direct ? undefined : env[`${name}_FILE`]) ??
      (direct || getPath(raw, key) !== undefined ? undefined : configFileKey);
    if (typeof file === "string" && file !== "") {
      try {
        setPath(raw, key, readSecretFile(file, key));
      } catch (error) {
        throw new ConfigError((error as Error).message);
      }
      secretFiles.push(resolve(file));
    } else if (direct) {
      setPath(raw, key, direct);
    }
  }
  for (const { key, flag, env: name } of SWITCHES) {
    const value = values[flag] ?? env[name];
    if (value !== undefined && value !== "") raw[key] = value;
  }
  const parsed = configSchema.safeParse(raw, {
    error: (issue) => (issue.code === "invalid_type" && issue.input === undefined ? "required" : undefined),
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "config"}: ${i.message}`);
    throw new ConfigError(`invalid config: ${problems.join("; ")}`);
  }
  return { ...parsed.data, secretFiles };
}

/**
 * Why a runner started as root must not run, unless told so: as root its sandboxes run as the host's root
 * outside their namespace (files only root may read under /etc are readable there), and one bug in what keeps
 * them apart is the host. Null when it may start.
 */
export function rootRefusal(uid: number, allowRoot: boolean): string | null {
  if (uid !== 0 || allowRoot) return null;
  return "refusing to run as root: sessions would run as the host's root outside their sandbox. Run conveyor-runner as an unprivileged user (the systemd unit does), or start it with --allow-root (allowRoot: true, CONVEYOR_ALLOW_ROOT=1) to accept that";
}

export function wantsHelp(argv: string[]): boolean {
  return parseFlags(argv).values.help === true;
}

function parseFlags(argv: string[]) {
  const options: Record<string, { type: "string" | "boolean" }> = {
    config: { type: "string" },
    help: { type: "boolean" },
  };
  for (const { flag } of SWITCHES) options[flag] = { type: "boolean" };
  for (const { flag } of SETTINGS) options[flag] = { type: "string" };
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }) as {
      values: Record<string, string | boolean | undefined> & { help?: boolean };
    };
  } catch (error) {
    throw new ConfigError((error as Error).message.split("\n")[0]);
  }
}

function readConfigFile(file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new ConfigError(`cannot read config file ${file}: ${(error as Error).message.split("\n")[0]}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError(`config file ${file} must hold a JSON object`);
  }
  return value as Record<string, unknown>;
}

function getPath(target: Record<string, unknown>, key: string): unknown {
  const [head = "", rest] = key.split(".", 2) as [string, string | undefined];
  const inner = target[head];
  if (rest === undefined) return inner;
  return typeof inner === "object" && inner !== null
    ? getPath(inner as Record<string, unknown>, rest)
    : undefined;
}

/** Reads and removes a (dotted) key of the config file's object. */
function takePath(target: Record<string, unknown>, key: string): unknown {
  const [head = "", rest] = key.split(".", 2) as [string, string | undefined];
  if (rest === undefined) {
    const value = target[head];
    delete target[head];
    return value;
  }
  const inner = target[head];
  return typeof inner === "object" && inner !== null
    ? takePath(inner as Record<string, unknown>, rest)
    : undefined;
}

function setPath(target: Record<string, unknown>, key: string, value: string): void {
  const [head = "", rest] = key.split(".", 2) as [string, string | undefined];
  if (rest === undefined) {
    target[head] = value;
    return;
  }
  const inner = target[head];
  const object = typeof inner === "object" && inner !== null ? (inner as Record<string, unknown>) : {};
  target[head] = { ...object, [rest]: value };
}
