/**
 * What `conveyor <words> [flags]` does with a list of commands: help (of all, of a group, of one command),
 * the flags in Conveyor's words, the settings (`--url`/CONVEYOR_URL with CONVEYOR_TOKEN or `--token-file`:
 * never a secret on the command line), and every failure as one line with its exit code: 1 the Worker refused
 * or could not be reached, 2 bad usage. It reads and writes only through `io`, so it runs in a test's process.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { packageVersion } from "../runner/package-version.ts";
import { errorMessage } from "../src/error-message.ts";
import { zodMessage } from "../src/validation.ts";
import { CliError, OperatorApi } from "./api.ts";
import type { Command } from "./command.ts";
import { secretSetting } from "./secrets.ts";

export type Io = {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
};

const GLOBAL_OPTIONS = {
  url: { type: "string" },
  "token-file": { type: "string" },
  project: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const configSchema = z.object({
  url: z.url({ protocol: /^https?$/, error: "set --url or CONVEYOR_URL to the Worker's URL" }),
  token: z.string({ error: "set CONVEYOR_TOKEN or --token-file to the operator token" }).min(1),
  project: z.string().optional(),
});

const HELP = new Set(["help", "--help", "-h"]);
const FLAGS = "[--url <worker url>] [--token-file <file>] [--project <id>] [--json]";

/** The commands of `group` (`project`), or all of them. */
function usage(commands: Command[], group?: string): string {
  const listed = group ? commands.filter((c) => c.name.startsWith(`${group} `)) : commands;
  return [
    `usage: conveyor ${group ?? "<command>"}${group ? " <command>" : ""} ${FLAGS}`,
    ...(group ? [] : ["       conveyor --version"]),
    "",
    ...listed.map((c) => `  ${c.usage}\n      ${c.summary}`),
    "",
    "Settings: CONVEYOR_URL, CONVEYOR_TOKEN (or --token-file), CONVEYOR_PROJECT (for --url, --project);",
    "CONVEYOR_FORGE_TOKEN (or project add --forge-token-file). Secrets are never flags: a command line is public.",
    "Exit codes: 0 done, 1 refused or unreachable, 2 bad usage.",
  ].join("\n");
}

/** `project` when some command's name starts with it. */
const isGroup = (commands: Command[], word: string | undefined) =>
  word !== undefined && commands.some((c) => c.name.startsWith(`${word} `));

/** The command whose words start `argv`, the longest if several do. */
function findCommand(commands: Command[], argv: string[]): Command | undefined {
  return commands
    .filter((c) => c.name.split(" ").every((word, i) => argv[i] === word))
    .sort((a, b) => b.name.length - a.name.length)[0];
}

/** A negative number (`project set parallel -1`) is a value: parseArgs alone would take it for a flag. */
const NEGATIVE_NUMBER = /^-\d/;

/** parseArgs's complaint in Conveyor's words. */
function flagError(error: unknown): string {
  const message = errorMessage(error);
  const flag = /'(-[^ ']*)/.exec(message)?.[1] ?? "";
  const code = (error as { code?: unknown }).code;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION")
    return flag === "--token"
      ? "unknown option --token (the operator token comes from CONVEYOR_TOKEN or --token-file: a command line is public)"
      : `unknown option ${flag}`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    if (/does not take an argument/.test(message)) return `${flag} takes no value`;
    if (/ambiguous/.test(message))
      return `${flag} needs a value (one that starts with - is written ${flag}=-…)`;
    return `${flag} needs a value`;
  }
  return message;
}

function parseFlags(cmd: Command, args: string[]) {
  const masked = args.map((arg, i) => (NEGATIVE_NUMBER.test(arg) ? `\0${i}` : arg));
  const unmask = <T>(value: T) =>
    typeof value === "string" && value.startsWith("\0") ? (args[Number(value.slice(1))] ?? value) : value;
  try {
    const { values, positionals } = parseArgs({
      args: masked,
      options: { ...GLOBAL_OPTIONS, ...cmd.options },
      allowPositionals: true,
      allowNegative: true,
      strict: true,
    });
    return {
      values: Object.fromEntries(Object.entries(values).map(([name, value]) => [name, unmask(value)])),
      positionals: positionals.map(unmask),
    };
  } catch (error) {
    throw new CliError(`${flagError(error)}; usage: conveyor ${cmd.usage}`, 2);
  }
}

async function run(commands: Command[], argv: string[], io: Io): Promise<number> {
  const [first] = argv;
  if (first === "--version" || first === "version") {
    io.stdout(`conveyor ${packageVersion(import.meta.url)}\n`);
    return 0;
  }
  const helpFirst = first !== undefined && HELP.has(first);
  const words = helpFirst ? argv.slice(1) : argv;
  // `conveyor`, `conveyor --help`, `conveyor help project`, `conveyor project`, `conveyor project --help`.
  const [word, next] = words;
  if (word === undefined || (isGroup(commands, word) && (next === undefined || HELP.has(next)))) {
    io.stdout(`${usage(commands, word)}\n`);
    return 0;
  }
  const cmd = findCommand(commands, words);
  if (!cmd) {
    const group = isGroup(commands, word);
    const named = group ? `${word} ${next}` : word;
    throw new CliError(`unknown command: ${named} (see conveyor ${group ? `${word} ` : ""}--help)`, 2);
  }
  const { values, positionals } = parseFlags(cmd, words.slice(cmd.name.split(" ").length));
  if (values.help || helpFirst) {
    io.stdout(`usage: conveyor ${cmd.usage}\n  ${cmd.summary}\n`);
    return 0;
  }
  if (positionals.length !== cmd.args.length) {
    throw new CliError(`expected ${cmd.args.length || "no"} argument(s); usage: conveyor ${cmd.usage}`, 2);
  }
  const config = configSchema.safeParse({
    url: values.url ?? io.env.CONVEYOR_URL,
    token: secretSetting(values["token-file"], io.env.CONVEYOR_TOKEN, "--token-file"),
    project: values.project ?? io.env.CONVEYOR_PROJECT,
  });
  if (!config.success) throw new CliError(zodMessage(config.error).replace(/^\w+: /, ""), 2);
  const input = cmd.input.safeParse({
    ...Object.fromEntries(cmd.args.map((name, i) => [name, positionals[i]])),
    ...values,
  });
  if (!input.success) throw new CliError(zodMessage(input.error), 2);
  const json = values.json === true;
  await cmd.run(input.data, {
    api: new OperatorApi(config.data.url, config.data.token),
    url: config.data.url,
    project: config.data.project,
    env: io.env,
    print: (text, value) => io.stdout(`${json ? JSON.stringify(value, null, 2) : text}\n`),
  });
  return 0;
}

/** Runs `conveyor <argv>` and answers its exit code; a failure is one line on stderr. */
export async function conveyor(commands: Command[], argv: string[], io: Io): Promise<number> {
  try {
    return await run(commands, argv, io);
  } catch (error) {
    io.stderr(`conveyor: ${errorMessage(error)}\n`);
    return error instanceof CliError ? error.exitCode : 1;
  }
}
