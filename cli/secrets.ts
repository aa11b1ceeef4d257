import { readSecretFile } from "../runner/secret-file.ts";
import { CliError } from "./api.ts";

/**
 * A secret from the file a flag names, else from the environment: never from the command line itself,
 * which every user of the host can read.
 */
export function secretSetting(file: unknown, fromEnv: string | undefined, flag: string): string | undefined {
  if (typeof file !== "string") return fromEnv;
  try {
    return readSecretFile(file, flag);
  } catch (error) {
    throw new CliError((error as Error).message, 2);
  }
}
