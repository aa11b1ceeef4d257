#!/usr/bin/env node
/**
 * conveyor: the operator CLI. It talks only to the Worker's operator API (`--url`/CONVEYOR_URL with
 * CONVEYOR_TOKEN or `--token-file`: never a secret on the command line). Exit codes: 0 done, 1 the Worker
 * refused or could not be reached, 2 bad usage.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { packageVersion } from "../runner/package-version.ts";
import { errorMessage } from "../src/error-message.ts";
import { zodMessage } from "../src/validation.ts";
import { CliError, OperatorApi } from "./api.ts";
import type { Command } from "./command.ts";
import { agentList, agentRun, agentShow } from "./commands/agent.ts";
import { health } from "./commands/health.ts";
import { abandon, approve, issueList, issueShow, redeliver, retry } from "./commands/issue.ts";
import { outcomes } from "./commands/outcomes.ts";
import { projectAdd, projectList, projectRemove, projectSet, projectShow } from "./commands/project.ts";
import { runnerRevoke, runnerToken, status } from "./commands/status.ts";
import { vaultApprove, vaultList, vaultReject } from "./commands/vault.ts";
import { secretSetting } from "./secrets.ts";

const COMMANDS: Command[] = [
  projectAdd,
  projectList,
  projectShow,
  projectSet,
  projectRemove,
  runnerToken,
  runnerRevoke,
  status,
  issueList,
  issueShow,
  approve,
  retry,
  abandon,
  redeliver,
  agentList,
  agentRun,
  agentShow,
  vaultList,
  vaultApprove,
  vaultReject,
  health,
  outcomes,
];

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

const USAGE = [
  "usage: conveyor <command> [--url <worker url>] [--token-file <file>] [--project <id>] [--json]",
  "       conveyor --version",
  "",
  ...COMMANDS.map((c) => `  ${c.usage}\n      ${c.summary}`),
  "",
  "Settings: CONVEYOR_URL, CONVEYOR_TOKEN (or --token-file), CONVEYOR_PROJECT (for --url, --project);",
  "CONVEYOR_FORGE_TOKEN (or project add --forge-token-file). Secrets are never flags: a command line is public.",
  "Exit codes: 0 done, 1 refused or unreachable, 2 bad usage.",
].join("\n");

function findCommand(argv: string[]): Command | undefined {
  return COMMANDS.filter((c) => c.name.split(" ").every((word, i) => argv[i] === word)).sort(
    (a, b) => b.name.length - a.name.length,
  )[0];
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === "--version" || argv[0] === "version") {
    process.stdout.write(`conveyor ${packageVersion(import.meta.url)}\n`);
    return 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const asksHelp = argv.length === 0 || argv[0] === "help" || argv[0] === "--help" || argv[0] === "-h";
    if (asksHelp) process.stdout.write(`${USAGE}\n`);
    else
      process.stderr.write(
        `conveyor: unknown command: ${argv.slice(0, 2).join(" ")} (see conveyor --help)\n`,
      );
    return asksHelp ? 0 : 2;
  }
  const cmd = found;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv.slice(cmd.name.split(" ").length),
      options: { ...GLOBAL_OPTIONS, ...cmd.options },
      allowPositionals: true,
      allowNegative: true,
      strict: true,
    });
  } catch (error) {
    throw new CliError(`${error instanceof Error ? error.message : error}; usage: conveyor ${cmd.usage}`, 2);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`usage: conveyor ${cmd.usage}\n  ${cmd.summary}\n`);
    return 0;
  }
  if (positionals.length !== cmd.args.length) {
    throw new CliError(`expected ${cmd.args.length || "no"} argument(s); usage: conveyor ${cmd.usage}`, 2);
  }
  const config = configSchema.safeParse({
    url: values.url ?? process.env.CONVEYOR_URL,
    token: secretSetting(values["token-file"], process.env.CONVEYOR_TOKEN, "--token-file"),
    project: values.project ?? process.env.CONVEYOR_PROJECT,
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
    print: (text, value) => process.stdout.write(`${json ? JSON.stringify(value, null, 2) : text}\n`),
  });
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  const known = error instanceof CliError;
  process.stderr.write(`conveyor: ${errorMessage(error)}\n`);
  process.exitCode = known ? error.exitCode : 1;
}
