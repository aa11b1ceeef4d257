import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { z } from "zod";
import { type RunnerApi, withRetries } from "./api.ts";
import type { Logger } from "./log.ts";

const identitySchema = z.object({ runnerId: z.string(), token: z.string().min(1) });
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
  runnerToken?: string;
  registrationToken?: string;
  name: string;
  version: string;
  log: Logger;
}): Promise<RunnerIdentity> {
  const { api, file, log } = options;
  if (options.runnerToken) return { runnerId: "", token: options.runnerToken };

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

async function readIdentity(file: string): Promise<RunnerIdentity | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const parsed = identitySchema.safeParse(parseJson(text));
  if (!parsed.success)
    throw new Error(`${file} does not hold a runner identity; remove it to register again`);
  return parsed.data;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
