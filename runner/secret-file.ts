import { readFileSync } from "node:fs";

/**
 * A secret read from a file (`--git-token-file`, `--token-file`, …): what a command line may carry instead
 * of the secret itself, which every user of the host could read in the process list. One trailing newline
 * is dropped; an empty file is an error, as is an unreadable one (`describe` names the setting).
 */
export function readSecretFile(file: string, describe: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`${describe}: cannot read ${file}: ${(error as Error).message.split("\n")[0]}`);
  }
  const secret = text.replace(/\r?\n$/, "");
  if (secret === "" || secret.includes("\n")) throw new Error(`${describe}: ${file} must hold one line`);
  return secret;
}
