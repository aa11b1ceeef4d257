#!/usr/bin/env node
/**
 * conveyor-runner: claims jobs from the Conveyor Worker and runs them in git worktrees on this host.
 * `npx conveyor-runner --config runner.json` in the repository (bin/conveyor-runner.js; see `--help`). Exit
 * codes: 0 after a clean stop (SIGTERM, SIGINT), 1 on a fatal error, 2 on a bad config (or, from the bin, a
 * Node older than the package needs).
 */
import { errorMessage } from "../src/error-message.ts";
import { RunnerApi } from "./api.ts";
import {
  ConfigError,
  loadConfig,
  pressureLimits,
  rootRefusal,
  SECRET_ENV,
  USAGE,
  wantsHelp,
} from "./config.ts";
import { createDriver } from "./drivers/create.ts";
import { Workspace } from "./git/workspace.ts";
import { Holdings } from "./holdings.ts";
import { ensureIdentity } from "./identity.ts";
import { killLeftoverSessions } from "./leftovers.ts";
import { acquireLock } from "./lock.ts";
import { Logger } from "./log.ts";
import { packageVersion } from "./package-version.ts";
import { WorkDirLayout } from "./paths.ts";
import { Secrets } from "./redact.ts";
import { Runner } from "./runner.ts";
import { probeSandbox } from "./sandbox/bubblewrap.ts";
import { sandboxGit } from "./sandbox/sandbox-git.ts";
import { Sandbox } from "./sandbox/session-sandbox.ts";
import { TokenRotation } from "./token-rotation.ts";

const VERSION = packageVersion(import.meta.url);

async function main(argv: string[]): Promise<number> {
  if (argv.includes("--version")) {
    process.stdout.write(`conveyor-runner ${VERSION}\n`);
    return 0;
  }
  if (wantsHelp(argv)) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const config = loadConfig(argv, process.env);
  // Read once; git and every other child process of the runner go without them.
  for (const name of SECRET_ENV) delete process.env[name];
  const uid = process.getuid?.() ?? -1;
  const refused = rootRefusal(uid, config.allowRoot);
  if (refused) throw new ConfigError(refused);

  const secrets = new Secrets();
  secrets.add(
    config.registrationToken,
    config.runnerToken,
    config.git?.token,
    config.anthropic.apiKey,
    config.anthropic.oauthToken,
  );
  const log = new Logger({ level: config.logLevel, secrets });
  const layout = new WorkDirLayout(config.workDir);
  const sandbox = new Sandbox({
    mode: config.unsafeNoSandbox ? "none" : "bubblewrap",
    model: config.anthropic,
    secretFiles: config.secretFiles,
    controllerDir: layout.controllerDir,
  });
  const workspace = new Workspace({
    workDir: config.workDir,
    credential: config.git,
    worktreeGit: sandboxGit(sandbox),
  });
  const release = acquireLock(layout.lockFile);
  try {
    const leftovers = await killLeftoverSessions(layout.agentsDir);
    if (leftovers.length > 0) log.warn("killed what a dead runner's sessions left", { pids: leftovers });
    if (uid === 0) {
      log.warn(
        "running as root (allowRoot): sessions run as uid 1000 with no capabilities in their sandbox, but as the host's root outside it",
      );
    }
    if (config.unsafeNoSandbox) {
      log.error(
        "UNSAFE: --unsafe-no-sandbox: sessions run without a sandbox and can read everything this user can (the runner token, the git credential, other issues' work)",
      );
    } else {
      const unavailable = await probeSandbox();
      if (unavailable) {
        throw new Error(`no sandbox for sessions: ${unavailable} (or start with --unsafe-no-sandbox)`);
      }
      if (config.driver === "claude") await sandbox.claudeCode();
    }
    const driver = createDriver(config, sandbox);
    const api = new RunnerApi(config.workerUrl, undefined, { sandbox: sandbox.settings.mode });
    const identity = await ensureIdentity({
      api,
      file: layout.identityFile,
      legacyFile: layout.legacyIdentityFile,
      runnerToken: config.runnerToken,
      registrationToken: config.registrationToken,
      name: config.name,
      version: VERSION,
      log,
    });
    secrets.add(identity.token);
    api.token = identity.token;
    const rotation = new TokenRotation({ api, file: layout.identityFile, identity, log, secrets });
    api.onRotationDue = () => rotation.due();

    const runner = new Runner({
      api,
      workspace,
      driver,
      holdings: new Holdings(layout.heldDir),
      layout,
      log,
      secrets,
      concurrency: config.concurrency,
      ...(config.projects && { projects: config.projects }),
      claimWaitMs: config.claimWaitMs,
      shutdownGraceMs: config.shutdownGraceMs,
      pressureLimits: pressureLimits(config),
    });
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => runner.stop());
    log.info("runner started", {
      version: VERSION,
      workDir: layout.root,
      concurrency: config.concurrency,
      driver: config.driver,
      sandbox: sandbox.settings.mode,
    });
    await runner.run();
    log.info("runner stopped");
    return 0;
  } catch (error) {
    log.error(errorMessage(error));
    return 1;
  } finally {
    release();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const message = errorMessage(error);
    process.stderr.write(`conveyor-runner: ${message.split("\n")[0]}\n`);
    process.exitCode = error instanceof ConfigError ? 2 : 1;
  },
);
