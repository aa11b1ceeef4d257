/** `project add | list | show | set | rm`: the project registry, and the forge webhook and labels on add. */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { projectIdSchema, registrationSchema } from "../../src/projects/config.ts";
import { zodMessage } from "../../src/validation.ts";
import { CliError } from "../api.ts";
import { type Context, command, projectOf } from "../command.ts";
import { table } from "../output.ts";
import {
  formulasSchema,
  type ProjectAnswer,
  projectListSchema,
  projectSchema,
  setupSchema,
} from "../schemas.ts";
import { secretSetting } from "../secrets.ts";

const addOptions = z.object({
  id: projectIdSchema,
  forge: z.string({ error: "--forge is required (forgejo, gitea or github)" }),
  "api-url": z.string({ error: "--api-url is required" }),
  repo: z.string({ error: "--repo is required (owner/name)" }),
  "forge-token-file": z.string().optional(),
  "webhook-secret-file": z.string().optional(),
  "action-secrets-file": z.string().optional(),
  "clone-url": z.string().optional(),
  "default-branch": z.string().optional(),
  parallel: z.coerce.number().optional(),
  "public-url": z.url({ protocol: /^https?$/ }).optional(),
  setup: z.boolean().optional(),
});

export const projectAdd = command({
  name: "project add",
  args: ["id"],
  usage:
    "project add <id> --forge forgejo|gitea|github --api-url <url> --repo <owner/name> [--forge-token-file <file>] " +
    "[--webhook-secret-file <file>] [--action-secrets-file <file>] [--clone-url <url>] [--default-branch <b>] [--parallel <n>] [--public-url <url>] " +
    "[--setup | --no-setup]",
  summary:
    "register (or update) a project; a new one also gets its forge webhook (<public url>/hooks/<id>) and labels",
  options: {
    forge: { type: "string" },
    "api-url": { type: "string" },
    repo: { type: "string" },
    "forge-token-file": { type: "string" },
    "webhook-secret-file": { type: "string" },
    "action-secrets-file": { type: "string" },
    "clone-url": { type: "string" },
    "default-branch": { type: "string" },
    parallel: { type: "string" },
    "public-url": { type: "string" },
    setup: { type: "boolean" },
  },
  input: addOptions.transform((o, ctx) => {
    const webhookSecret = secretSetting(o["webhook-secret-file"], undefined, "--webhook-secret-file");
    // One line of JSON, {"NAME": "value", …}: the secrets action formulas declare (docs/actions.md).
    const actionSecretsText = secretSetting(o["action-secrets-file"], undefined, "--action-secrets-file");
    let actionSecrets: unknown;
    try {
      actionSecrets = actionSecretsText === undefined ? undefined : JSON.parse(actionSecretsText);
    } catch {
      ctx.addIssue({ code: "custom", message: "--action-secrets-file: not one line of JSON" });
      return z.NEVER;
    }
    const registration = {
      forge: o.forge,
      apiUrl: o["api-url"],
      repo: o.repo,
      webhookSecret: webhookSecret ?? randomBytes(32).toString("hex"),
      ...(o["clone-url"] && { cloneUrl: o["clone-url"] }),
      ...(o["default-branch"] && { defaultBranch: o["default-branch"] }),
      ...(o.parallel !== undefined && { parallel: o.parallel }),
      ...(actionSecrets !== undefined && { actionSecrets }),
    };
    return {
      id: o.id,
      registration,
      forgeTokenFile: o["forge-token-file"],
      generatedSecret: webhookSecret === undefined,
      publicUrl: o["public-url"],
      setup: o.setup,
    };
  }),
  async run(input, ctx) {
    const { id } = input;
    const forgeToken = secretSetting(
      input.forgeTokenFile,
      ctx.env.CONVEYOR_FORGE_TOKEN,
      "--forge-token-file",
    );
    if (forgeToken === undefined)
      throw new CliError("set CONVEYOR_FORGE_TOKEN or --forge-token-file to the forge token", 2);
    const registration = { ...input.registration, forgeToken };
    // The Worker's own schema: a bad flag is reported before anything is sent.
    const valid = registrationSchema.safeParse(registration);
    if (!valid.success) throw new CliError(zodMessage(valid.error), 2);
    const path = `/projects/${id}`;
    const { status, data: project } = await ctx.api.request("PUT", path, projectSchema, registration);
    const existed = status === 200;
    const lines = [`${existed ? "updated" : "registered"} ${id}: ${project.forge} ${project.repo}`];
    // A webhook is created for a new project, or when asked: each setup creates one more.
    const setup = input.setup ?? !existed;
    let done: z.infer<typeof setupSchema> | null = null;
    if (!setup) {
      if (input.generatedSecret)
        lines.push(`webhook secret (for a webhook you create): ${registration.webhookSecret}`);
      lines.push(`no webhook created${existed ? " (already registered; --setup creates one)" : ""}`);
    } else {
      const webhookUrl = `${(input.publicUrl ?? ctx.url).replace(/\/+$/, "")}/hooks/${id}`;
      done = await ctx.api.call("POST", `${path}/setup`, setupSchema, { webhookUrl });
      lines.push(`webhook ${done.webhook.id}: ${done.webhook.url} (${done.webhook.events.join(", ")})`);
      lines.push(`labels: ${done.labels.join(", ")}`);
    }
    const formulas = await formulaProblems(ctx, path);
    lines.push(...formulas);
    ctx.print(lines.join("\n"), { project, setup: done, formulas });
  },
});

/**
 * What the project's action formulas need and it lacks (a secret a formula declares and `actionSecrets` does
 * not hold, a file that does not parse), one line each; a repository it cannot read yet is said, not fatal.
 */
async function formulaProblems(ctx: Context, path: string): Promise<string[]> {
  let answer: z.infer<typeof formulasSchema>;
  try {
    answer = await ctx.api.call("GET", `${path}/formulas`, formulasSchema);
  } catch (error) {
    return [`formulas not checked: ${error instanceof Error ? error.message : String(error)}`];
  }
  return [
    ...answer.formulas
      .filter((f) => f.missingSecrets.length > 0)
      .map(
        (f) =>
          `formula ${f.name} needs the secret${f.missingSecrets.length > 1 ? "s" : ""} ${f.missingSecrets.join(", ")}, which the project lacks: add ${f.missingSecrets.length > 1 ? "them" : "it"} with --action-secrets-file`,
      ),
    ...answer.problems.map((p) => `formula ${p.name} does not parse: ${p.error}`),
  ];
}

const describe = (p: ProjectAnswer) =>
  [
    `${p.id}: ${p.forge} ${p.repo}`,
    `api        ${p.apiUrl}`,
    `clone      ${p.cloneUrl}`,
    `registered ${new Date(p.createdAt).toISOString()} (updated ${new Date(p.updatedAt).toISOString()})`,
    `settings   ${JSON.stringify(p.settings, null, 2).replace(/\n/g, "\n           ")}`,
  ].join("\n");

export const projectList = command({
  name: "project list",
  args: [],
  usage: "project list",
  summary: "registered projects",
  input: z.object({}),
  async run(_, ctx) {
    const { projects } = await ctx.api.call("GET", "/projects", projectListSchema);
    const rows = projects.map((p) => [p.id, p.forge, p.repo, p.cloneUrl]);
    ctx.print(projects.length ? table(["ID", "FORGE", "REPO", "CLONE URL"], rows) : "no projects", projects);
  },
});

export const projectShow = command({
  name: "project show",
  args: ["id"],
  usage: "project show <id>",
  summary: "a project's registration and settings (never its secrets)",
  input: z.object({ id: projectIdSchema }),
  async run({ id }, ctx) {
    const project = await ctx.api.call("GET", `/projects/${id}`, projectSchema);
    ctx.print(describe(project), project);
  },
});

export const projectSet = command({
  name: "project set",
  args: ["key", "value"],
  usage: "project set <key> <value> --project <id>",
  summary:
    "change one setting (parallel 4, jobs.leaseMs 120000, protectedPaths '[\".ci/**\"]', ci.woodpeckerUrl null); the Worker validates it",
  input: z.object({ key: z.string().min(1).max(200), value: z.string() }),
  async run({ key, value }, ctx) {
    const id = projectOf(ctx);
    // The text goes as typed: the Worker reads it as the setting wants (`4` a number for `parallel`).
    const project = await ctx.api.call("PATCH", `/projects/${id}/settings`, projectSchema, { key, value });
    const now = key
      .split(".")
      .reduce<unknown>((at, part) => (at as Record<string, unknown>)?.[part], project.settings);
    ctx.print(`${id}: ${key} = ${JSON.stringify(now) ?? "(default)"}`, project);
  },
});

export const projectRemove = command({
  name: "project rm",
  args: ["id"],
  usage: "project rm <id>",
  summary: "unregister a project (its forge webhook stays until removed on the forge)",
  input: z.object({ id: projectIdSchema }),
  async run({ id }, ctx) {
    await ctx.api.call("DELETE", `/projects/${id}`, z.null());
    ctx.print(`removed ${id}`, { removed: id });
  },
});
