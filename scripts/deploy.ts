/**
 * npm run deploy [-- --dry-run]: a Cloudflare account from nothing to a running Conveyor Worker, and every
 * later upgrade. Finds or creates the D1 database without touching the tracked wrangler.toml (the id goes
 * into a generated config under .wrangler/deploy/), applies the migrations remotely before the code that
 * needs them, deploys, sets the secrets the Worker lacks (on wrangler's stdin, never its command line) and
 * prints the URL. docs/deploy.md tells the whole story.
 */
import { spawn } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { createInterface } from "node:readline/promises";
import {
  DEPLOY_DIR,
  deployConfig,
  findDatabase,
  names,
  SECRETS,
  type SecretName,
  secretNames,
  steps,
  workerUrl,
} from "./deploy/plan.ts";

const ROOT = new URL("..", import.meta.url).pathname;
/** CONVEYOR_DEPLOY_DIR moves the generated files (the test keeps them out of the checkout). */
const dir = process.env.CONVEYOR_DEPLOY_DIR ?? join(ROOT, DEPLOY_DIR);
const configFile = join(dir, "wrangler.toml");

type Result = { code: number; stdout: string; stderr: string };

/** wrangler with `input` on its stdin; its output is also shown unless `quiet`. */
function wrangler(args: string[], options: { input?: string; quiet?: boolean } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn("wrangler", args, {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
      if (!options.quiet) process.stdout.write(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
      if (!options.quiet) process.stderr.write(chunk);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

/** wrangler's own words for a failure it reported: kept from the operator only while quiet. */
function failed(args: string[], result: Result, options: { quiet?: boolean } = {}): Error {
  if (options.quiet) process.stderr.write(result.stderr || result.stdout);
  return new Error(`wrangler ${args.slice(0, 3).join(" ")} failed (exit ${result.code}): its error is above`);
}

async function must(args: string[], options?: { input?: string; quiet?: boolean }): Promise<string> {
  const result = await wrangler(args, options);
  if (result.code !== 0) throw failed(args, result, options);
  return result.stdout;
}

const say = (line: string) => process.stdout.write(`deploy: ${line}\n`);

async function secretValue(name: SecretName): Promise<string | undefined> {
  const spec = SECRETS[name];
  if (spec.generate) {
    const value = spec.generate();
    // Kept for the operator (the admin token signs in; the sealing key is what a D1 backup needs).
    const file = join(dir, spec.keep);
    await writeFile(file, `${value}\n`, { mode: 0o600 });
    await chmod(file, 0o600);
    say(`${name}: generated, kept in ${relative(ROOT, file)} (mode 0600; store it safely)`);
    return value;
  }
  if (process.env[name]) return process.env[name];
  if (!process.stdin.isTTY) return undefined;
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  const answer = await rl.question(`${name} (the critic's Messages API key; empty to skip): `);
  rl.close();
  return answer.trim() || undefined;
}

async function main(argv: string[]): Promise<number> {
  const dryRun = argv.includes("--dry-run");
  const toml = await readFile(join(ROOT, "wrangler.toml"), "utf8");
  const { worker, database } = names(toml);
  if (dryRun) {
    say(`plan for the Worker ${worker} (nothing is changed):`);
    steps(worker, database, join(DEPLOY_DIR, "wrangler.toml")).forEach((step, i) => {
      process.stdout.write(`  ${i + 1}. ${step}\n`);
    });
    return 0;
  }

  // Not logged in, wrangler says so and exits 0; anything else (an expired or under-scoped token, a proxy, no
  // network) is an error of its own, which the operator needs to read rather than a guess.
  const who = await wrangler(["whoami"], { quiet: true });
  if (who.code !== 0) throw failed(["whoami"], who, { quiet: true });
  if (/not authenticated/i.test(who.stdout)) {
    say("not logged in to Cloudflare: run npx wrangler login (or set CLOUDFLARE_API_TOKEN), then again");
    return 1;
  }

  let id = findDatabase(await must(["d1", "list", "--json"], { quiet: true }), database);
  if (id) say(`D1 database ${database}: found (${id})`);
  else {
    await must(["d1", "create", database]);
    id = findDatabase(await must(["d1", "list", "--json"], { quiet: true }), database);
    if (!id) throw new Error(`created the D1 database ${database} but cannot find it`);
    say(`D1 database ${database}: created (${id})`);
  }

  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(configFile, deployConfig(toml, id, ROOT, dir));
  say(`wrote ${relative(ROOT, configFile)}`);

  // Before the code that reads the new tables: the running version keeps working on the migrated schema.
  await must(["d1", "migrations", "apply", database, "--remote", "-c", configFile]);
  const deployed = await must(["deploy", "-c", configFile]);

  const listed = await wrangler(["secret", "list", "--format", "json", "-c", configFile], { quiet: true });
  const present = listed.code === 0 ? secretNames(listed.stdout) : [];
  for (const name of Object.keys(SECRETS) as SecretName[]) {
    if (present.includes(name)) {
      say(`${name}: already set, kept`);
      continue;
    }
    const value = await secretValue(name);
    if (value === undefined) {
      say(`${name}: skipped (set it later: npx wrangler secret put ${name} -c ${configFile})`);
      continue;
    }
    await must(["secret", "put", name, "-c", configFile], { input: value, quiet: true });
    say(`${name}: set`);
  }

  const url = workerUrl(deployed);
  say(url ? `the Worker runs at ${url} (dashboard: ${url}/dashboard)` : "deployed; wrangler printed no URL");
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`deploy: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
