/**
 * A formula: the named, versioned list of steps an `action` issue follows, kept in the repository as
 * `.conveyor/formulas/<name>.md` — YAML frontmatter (name, version, description, inputs, network hosts,
 * secrets, steps) and a markdown body of guidance for the agent — or `<name>.toml`, the same fields as TOML
 * with the guidance in a `guidance` string. Parsing is strict: an unknown field, a duplicate step id or a step
 * secret the formula does not declare is reported in one line, never guessed at.
 */
import { parse as parseToml } from "smol-toml";
import { z } from "zod";
import { FRONTMATTER, type Parsed, readYaml } from "../agents/definition.ts";
import { zodMessage } from "../validation.ts";

export const FORMULA_NAME = /^[a-z][a-z0-9-]{0,39}$/;
export const STEP_ID = /^[a-z][a-z0-9_-]{0,39}$/;
/** An environment variable's name: how a step's command receives the secret. */
export const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
/** A host name the egress proxy may connect to (port 443), no scheme, no port, no wildcard. */
const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export const MAX_FORMULA_BYTES = 64 * 1024;
export const MAX_STEPS = 50;

const stepSchema = z
  .object({
    id: z.string().regex(STEP_ID, `a step id is ${STEP_ID}`),
    description: z.string().min(1).max(1_000),
    /** Run by the runner (not the agent) in the sandbox when the agent calls `run_step`; none: the agent's own work. */
    command: z.string().min(1).max(4_000).optional(),
    /** Needs a vault approval of exactly this step before its command runs. */
    dangerous: z.boolean().default(false),
    /**
     * A dangerous step the action may finish without (it runs only when the session finds it needed). Every
     * other dangerous step must have fired before the action ends `done` (src/domain/action-claims.ts).
     */
    optional: z.boolean().default(false),
    /** The project secrets this step's command is given, as environment variables of these names. */
    secrets: z
      .array(z.string().regex(SECRET_NAME, `a secret name is ${SECRET_NAME}`))
      .max(20)
      .default([]),
    /**
     * Show the agent the end of the command's output (bounded, redacted). A step without secrets always
     * shows it; a step with secrets only when this says so: whatever it prints could carry them, in any
     * encoding, and redaction catches only their literal values. Kept only when true: runners older than
     * the field parse a job's steps strictly, and a formula that does not use it reaches them unchanged.
     */
    output: z
      .boolean()
      .transform((shown) => shown || undefined)
      .optional(),
  })
  .strict();

const inputSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]{0,39}$/),
    description: z.string().min(1).max(500),
    required: z.boolean().default(false),
  })
  .strict();

export const formulaSchema = z
  .object({
    name: z.string().regex(FORMULA_NAME, `a formula name is ${FORMULA_NAME}`),
    /** A number or a dotted version; kept as text. */
    version: z.union([
      z.number().int().min(0).transform(String),
      z.string().regex(/^\d+(\.\d+){0,2}$/, "a version is a number or a dotted version such as 1.2.0"),
    ]),
    description: z.string().min(1).max(500),
    inputs: z.array(inputSchema).max(20).default([]),
    /** Hosts the step commands may reach (port 443, through the runner's egress proxy). */
    network: z
      .array(z.string().regex(HOST, "a network entry is a host name such as api.example.com"))
      .max(20)
      .default([]),
    /** Every project secret any step uses; a step names its own subset. */
    secrets: z
      .array(z.string().regex(SECRET_NAME, `a secret name is ${SECRET_NAME}`))
      .max(20)
      .default([]),
    steps: z.array(stepSchema).min(1).max(MAX_STEPS),
  })
  .strict()
  .superRefine((formula, ctx) => {
    const seen = new Set<string>();
    for (const [i, step] of formula.steps.entries()) {
      if (seen.has(step.id)) {
        ctx.addIssue({ code: "custom", path: ["steps", i, "id"], message: `duplicate step id "${step.id}"` });
      }
      seen.add(step.id);
      for (const secret of step.secrets) {
        if (!formula.secrets.includes(secret)) {
          ctx.addIssue({
            code: "custom",
            path: ["steps", i, "secrets"],
            message: `step "${step.id}" uses secret ${secret}, which the formula's secrets do not declare`,
          });
        }
      }
      if (step.secrets.length > 0 && !step.command) {
        ctx.addIssue({
          code: "custom",
          path: ["steps", i, "secrets"],
          message: `step "${step.id}" has secrets but no command to give them to`,
        });
      }
      if (step.output && !step.command) {
        ctx.addIssue({
          code: "custom",
          path: ["steps", i, "output"],
          message: `step "${step.id}" asks for output but has no command`,
        });
      }
    }
  });

export type Formula = z.output<typeof formulaSchema> & {
  /** The markdown after the frontmatter: guidance for the agent (may be empty). */
  guidance: string;
};
export type FormulaStep = Formula["steps"][number];

const tooLarge = (text: string) => new TextEncoder().encode(text).length > MAX_FORMULA_BYTES;

/** Parses `.conveyor/formulas/<fileName>.md`; the error is one line naming what to fix. */
export function parseFormula(fileName: string, text: string): Parsed<Formula> {
  if (tooLarge(text)) return { ok: false, error: `larger than ${MAX_FORMULA_BYTES} bytes` };
  const match = FRONTMATTER.exec(text.replace(/^\uFEFF/, ""));
  if (!match) return { ok: false, error: "no frontmatter: the file must start with a --- line and close it" };
  const yaml = readYaml(match[1] ?? "");
  if (!yaml.ok) return { ok: false, error: `frontmatter: ${yaml.error}` };
  const guidance = text.slice((match.index ?? 0) + match[0].length).trim();
  return checked(fileName, yaml.value ?? {}, guidance, "frontmatter: ");
}

/** Parses `.conveyor/formulas/<fileName>.toml`: the frontmatter's fields at the top level, and `guidance`. */
export function parseTomlFormula(fileName: string, text: string): Parsed<Formula> {
  if (tooLarge(text)) return { ok: false, error: `larger than ${MAX_FORMULA_BYTES} bytes` };
  let table: Record<string, unknown>;
  try {
    table = parseToml(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return { ok: false, error: `not TOML: ${message}` };
  }
  const { guidance = "", ...fields } = table;
  if (typeof guidance !== "string") return { ok: false, error: "guidance: expected a string" };
  return checked(fileName, fields, guidance.trim(), "");
}

function checked(fileName: string, fields: unknown, guidance: string, where: string): Parsed<Formula> {
  const parsed = formulaSchema.safeParse(fields);
  if (!parsed.success) return { ok: false, error: `${where}${zodMessage(parsed.error)}` };
  if (parsed.data.name !== fileName)
    return { ok: false, error: `${where}name "${parsed.data.name}" is not the file's name "${fileName}"` };
  return { ok: true, value: { ...parsed.data, guidance } };
}

/** The label that makes an issue an action (project setup creates it; the planner adds it to operational work). */
export const ACTION_LABEL = "action";

export const FORMULAS_DIR = ".conveyor/formulas/";
/** More files than this in the directory are a mistake; the rest are reported, not read. */
export const MAX_FORMULA_FILES = 30;

export type FormulaFile = { ok: true; formula: Formula } | { ok: false; error: string };

/**
 * The formula `name` among the repository's `.conveyor/formulas/` files (path → text, read at the default
 * branch), or why there is none usable.
 */
export function findFormula(files: ReadonlyMap<string, string>, name: string): FormulaFile {
  if (!FORMULA_NAME.test(name))
    return { ok: false, error: `formula name "${name.slice(0, 60)}": ${FORMULA_NAME}` };
  const forms = (
    [
      [".md", parseFormula],
      [".toml", parseTomlFormula],
    ] as const
  ).filter(([extension]) => files.has(`${FORMULAS_DIR}${name}${extension}`));
  const [form, other] = forms;
  if (!form)
    return { ok: false, error: `no formula ${FORMULAS_DIR}${name}.md (or .toml) on the default branch` };
  // Two files for one name: which one the writer meant is not Conveyor's to guess.
  if (other)
    return { ok: false, error: `two formulas named ${name} (${name}.md and ${name}.toml): keep one` };
  const [extension, parse] = form;
  const path = `${FORMULAS_DIR}${name}${extension}`;
  const parsed = parse(name, files.get(path) ?? "");
  return parsed.ok ? { ok: true, formula: parsed.value } : { ok: false, error: `${path}: ${parsed.error}` };
}

/** What an issue says about its formula: none named, one name, or a contradiction. */
export type FormulaChoice =
  | { kind: "none" }
  | { kind: "named"; name: string }
  | { kind: "invalid"; error: string };

const FORMULA_LINE = /^[ \t]*formula[ \t]*:[ \t]*(\S+)[ \t]*$/gim;
const FORMULA_LABEL = "formula/";

/**
 * The formula an `action` issue names: a line `Formula: <name>` in its body, or a label `formula/<name>`.
 * Two different names (two lines, two labels, or a line and a label) are a contradiction, not a choice.
 */
export function formulaOf(body: string, labels: readonly string[]): FormulaChoice {
  const names = new Set<string>();
  for (const match of body.matchAll(FORMULA_LINE)) names.add((match[1] ?? "").replace(/^`|`$/g, ""));
  for (const label of labels) {
    if (label.toLowerCase().startsWith(FORMULA_LABEL)) names.add(label.slice(FORMULA_LABEL.length));
  }
  if (names.size === 0) return { kind: "none" };
  if (names.size > 1) {
    return {
      kind: "invalid",
      error: `the issue names more than one formula: ${[...names].sort().join(", ")}`,
    };
  }
  const [name = ""] = names;
  if (!FORMULA_NAME.test(name))
    return { kind: "invalid", error: `"${name.slice(0, 60)}" is not a formula name` };
  return { kind: "named", name };
}

/**
 * The secrets `formula` declares that the project's `actionSecrets` (`held`) lack, said in one line; null when
 * it has them all. A step needing one would be refused on the runner after the session began.
 */
export function missingSecrets(
  formula: Pick<Formula, "name" | "secrets">,
  held: Readonly<Record<string, string>> = {},
): string | null {
  const missing = lackedSecrets(formula, held);
  if (missing.length === 0) return null;
  const s = missing.length > 1 ? "s" : "";
  return `formula ${formula.name} needs the project secret${s} ${missing.join(", ")}, which the project lacks: add ${missing.length > 1 ? "them" : "it"} to its actionSecrets`;
}

/** The names of the secrets `formula` declares that `held` (the project's `actionSecrets`) lacks. */
export const lackedSecrets = (
  formula: Pick<Formula, "secrets">,
  held: Readonly<Record<string, string>> = {},
): string[] => formula.secrets.filter((name) => !Object.hasOwn(held, name));

/** Every formula among the repository's `.conveyor/formulas/` files, or the file's problem. */
export function formulaCatalog(files: ReadonlyMap<string, string>): {
  formulas: Formula[];
  problems: { name: string; error: string }[];
} {
  const names = new Set(
    [...files.keys()].flatMap((path) => {
      const match = /^\.conveyor\/formulas\/([^/]+)\.(?:md|toml)$/.exec(path);
      return match?.[1] ? [match[1]] : [];
    }),
  );
  const formulas: Formula[] = [];
  const problems: { name: string; error: string }[] = [];
  for (const name of [...names].sort()) {
    const found = findFormula(files, name);
    if (found.ok) formulas.push(found.formula);
    else problems.push({ name, error: found.error });
  }
  return { formulas, problems };
}

/** The step `id` of `formula`, if it has one. */
export const stepOf = (formula: Pick<Formula, "steps">, id: string): FormulaStep | undefined =>
  formula.steps.find((step) => step.id === id);
