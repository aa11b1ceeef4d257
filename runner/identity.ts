import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { z } from "zod";
import { type RunnerApi, withRetries } from "./api.ts";
import type { Logger } from "./log.ts";

const identitySchema = z.object({ runnerId: z.string(), token: z.string().min(1) });
// Under the old name, only exactly an identity moves: a config (workerUrl, registrationToken, …) never does.
const legacyIdentitySchema = identitySchema.strict();
export type RunnerIdentity = z.infer<typeof identitySchema>;

/** With the retry backoff, about a minute for a Worker that is not up yet. */
const REGISTER_ATTEMPTS = 8;

/**
 * The runner's token: given in the config, stored in the work dir by an earlier start, or obtained now by the
 * one-time registration (and then stored, mode 0600, for every later start).
 */
export async function ensureIdentity(options: {
  api: RunnerApi;
  file: string;
  /** The identity file's old name, moved to `file` when it holds an identity and `file` does not exist. */
  legacyFile?: string;
  runnerToken?: string;
  registrationToken?: string;
  name: string;
  version: string;
  log: Logger;
}): Promise<RunnerIdentity> {
  const { api, file, log } = options;
  if (options.runnerToken) return { runnerId: "", token: options.runnerToken };

  if (options.legacyFile && (await migrateIdentity(options.legacyFile, file)))
    log.info("moved the runner identity to its own name", { from: options.legacyFile, file });
  const stored = await readIdentity(file);
  if (stored) {
    log.info("using the stored runner token", { runnerId: stored.runnerId, file });
    return stored;
  }
  if (!options.registrationToken) {
    throw new Error(`no runner token stored in ${file}: give a registrationToken for the first start`);
  }
  const request = {
    registrationToken: options.registrationToken,
    name: options.name,
    version: options.version,
  };
  const identity = await withRetries(() => api.register(request), {
    attempts: REGISTER_ATTEMPTS,
    onRetry: (error, delayMs) => log.warn("registration failed; retrying", { error, delayMs }),
  });
  await storeIdentity(file, identity);
  log.info("registered", { runnerId: identity.runnerId, file });
  return identity;
}

/** Written aside and renamed, mode 0600: a crash never leaves half a token behind. */
export async function storeIdentity(file: string, identity: RunnerIdentity): Promise<void> {
  const partial = `${file}.partial`;
  await rm(partial, { force: true });
  await writeFile(partial, `${JSON.stringify(identity)}\n`, { mode: 0o600 });
  await rename(partial, file);
}

/**
 * Moves an identity from `legacy` to `file`, only when `file` is absent and `legacy` holds exactly an identity
 * (`runnerId`, `token`): anything else there, a config above all, stays where it is, untouched.
 */
export async function migrateIdentity(legacy: string, file: string): Promise<boolean> {
  if ((await readText(file)) !== undefined) return false;
  const text = await readText(legacy);
  if (text === undefined || !legacyIdentitySchema.safeParse(parseJson(text)).success) return false;
  await rename(legacy, file);
  return true;
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

async function readIdentity(file: string): Promise<RunnerIdentity | undefined> {
  const text = await readText(file);
  if (text === undefined) return undefined;
  const parsed = identitySchema.safeParse(parseJson(text));
  // The runner alone writes this file; a damaged one means registering again (the old runner is then
  // revoked with `conveyor runner revoke`).
  if (!parsed.success)
    throw new Error(
      `${file} is damaged (not a runner id and token); remove it and start with a new registrationToken`,
    );
  return parsed.data;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
