import { describe, expect, it } from "vitest";
import {
  FORMULAS_DIR,
  findFormula,
  formulaCatalog,
  formulaOf,
  missingSecrets,
  parseFormula,
  parseTomlFormula,
} from "../../src/formulas/formula.ts";

const ROTATE = `---
name: rotate-token
version: 1
description: Rotate the deploy token
inputs:
  - name: environment
    description: staging or production
    required: true
network: [api.example.com]
secrets: [DEPLOY_TOKEN]
steps:
  - id: check
    description: Read the current token's age
    command: ./scripts/token-age.sh
    secrets: [DEPLOY_TOKEN]
  - id: rotate
    description: Issue a new token and revoke the old one
    command: ./scripts/rotate.sh
    dangerous: true
    secrets: [DEPLOY_TOKEN]
  - id: report
    description: Say which token is live now
---
Post the new token's id, never its value.
`;

/** The formula with its steps replaced by `steps` (YAML lines). */
const withSteps = (steps: string) => ROTATE.replace(/steps:\n[\s\S]*?---/, `steps:\n${steps}\n---`);

function error(name: string, text: string): string {
  const parsed = parseFormula(name, text);
  if (parsed.ok) throw new Error("parsed");
  return parsed.error;
}

describe("parseFormula", () => {
  it("reads the frontmatter and the guidance, with defaults", () => {
    const parsed = parseFormula("rotate-token", ROTATE);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.value).toMatchObject({
      name: "rotate-token",
      version: "1",
      network: ["api.example.com"],
      secrets: ["DEPLOY_TOKEN"],
      inputs: [{ name: "environment", required: true }],
      guidance: "Post the new token's id, never its value.",
    });
    expect(parsed.value.steps.map((s) => [s.id, s.dangerous, s.secrets, s.command ?? null])).toEqual([
      ["check", false, ["DEPLOY_TOKEN"], "./scripts/token-age.sh"],
      ["rotate", true, ["DEPLOY_TOKEN"], "./scripts/rotate.sh"],
      ["report", false, [], null],
    ]);
  });

  it("keeps a dotted version as text", () => {
    const parsed = parseFormula("rotate-token", ROTATE.replace("version: 1", "version: 1.2.0"));
    expect(parsed.ok && parsed.value.version).toBe("1.2.0");
  });

  it("reports an unknown step field instead of ignoring it", () => {
    const text = withSteps("  - id: a\n    description: x\n    dangerus: true");
    expect(error("rotate-token", text)).toBe('frontmatter: steps.0: Unrecognized key: "dangerus"');
  });

  it("reports a duplicate step id", () => {
    const text = withSteps("  - id: a\n    description: x\n  - id: a\n    description: y");
    expect(error("rotate-token", text)).toBe('frontmatter: steps.1.id: duplicate step id "a"');
  });

  it("reports a step secret the formula does not declare", () => {
    const text = withSteps("  - id: a\n    description: x\n    command: env\n    secrets: [OTHER]");
    expect(error("rotate-token", text)).toBe(
      'frontmatter: steps.0.secrets: step "a" uses secret OTHER, which the formula\'s secrets do not declare',
    );
  });

  it("reports secrets or output on a step with no command", () => {
    const text = withSteps("  - id: a\n    description: x\n    secrets: [DEPLOY_TOKEN]");
    expect(error("rotate-token", text)).toMatch(/step "a" has secrets but no command/);
    const output = withSteps("  - id: a\n    description: x\n    output: true");
    expect(error("rotate-token", output)).toBe(
      'frontmatter: steps.0.output: step "a" asks for output but has no command',
    );
  });

  it("shows a step's output only where the formula asks for it", () => {
    const text = withSteps(
      "  - id: a\n    description: x\n    command: env\n    output: true\n  - id: b\n    description: y",
    );
    const parsed = parseFormula("rotate-token", text);
    // Absent unless set: a formula that does not use it reaches runners older than the field unchanged.
    expect(parsed.ok && parsed.value.steps.map((s) => "output" in s && s.output)).toEqual([true, false]);
    const off = parseFormula("rotate-token", text.replace("output: true", "output: false"));
    expect(off.ok && JSON.parse(JSON.stringify(off.value.steps[0]))).not.toHaveProperty("output");
  });

  it("reports an unknown top-level field, a bad host, a wrong name and no steps", () => {
    expect(error("rotate-token", ROTATE.replace("version: 1", "version: 1\nowner: me"))).toBe(
      'frontmatter: Unrecognized key: "owner"',
    );
    expect(error("rotate-token", ROTATE.replace("[api.example.com]", "[https://api.example.com]"))).toMatch(
      /^frontmatter: network.0: a network entry is a host name/,
    );
    expect(error("other", ROTATE)).toBe('frontmatter: name "rotate-token" is not the file\'s name "other"');
    expect(error("rotate-token", withSteps("  []"))).toMatch(/^frontmatter: steps: /);
  });

  it("reports YAML errors and a missing frontmatter in one line", () => {
    expect(error("x", "no frontmatter here")).toBe(
      "no frontmatter: the file must start with a --- line and close it",
    );
    const duplicateKey = ROTATE.replace("version: 1", "version: 1\nversion: 2");
    expect(error("rotate-token", duplicateKey)).toMatch(/^frontmatter: Map keys must be unique/);
    expect(error("rotate-token", duplicateKey)).not.toContain("\n");
  });
});

/** ROTATE as TOML: the same fields, the guidance in its own string. */
const ROTATE_TOML = `name = "rotate-token"
version = 1
description = "Rotate the deploy token"
network = ["api.example.com"]
secrets = ["DEPLOY_TOKEN"]
guidance = """
Post the new token's id, never its value.
"""

[[inputs]]
name = "environment"
description = "staging or production"
required = true

[[steps]]
id = "check"
description = "Read the current token's age"
command = "./scripts/token-age.sh"
secrets = ["DEPLOY_TOKEN"]

[[steps]]
id = "rotate"
description = "Issue a new token and revoke the old one"
command = "./scripts/rotate.sh"
dangerous = true
secrets = ["DEPLOY_TOKEN"]

[[steps]]
id = "report"
description = "Say which token is live now"
`;

describe("parseTomlFormula", () => {
  it("reads the same formula as the markdown form", () => {
    expect(parseTomlFormula("rotate-token", ROTATE_TOML)).toEqual(parseFormula("rotate-token", ROTATE));
  });

  it("reports TOML syntax, unknown fields and a guidance that is no string in one line", () => {
    const bad = (text: string) => {
      const parsed = parseTomlFormula("rotate-token", text);
      if (parsed.ok) throw new Error("parsed");
      expect(parsed.error).not.toContain("\n");
      return parsed.error;
    };
    expect(bad('name = "rotate-token"\nversion = ')).toMatch(/^not TOML: /);
    expect(bad(ROTATE_TOML.replace("dangerous = true", "dangerous = true\nretries = 3"))).toMatch(/retries/);
    expect(bad(ROTATE_TOML.replace('guidance = """', 'guidance = 3\nx = """'))).toBe(
      "guidance: expected a string",
    );
    expect(bad(ROTATE_TOML.replace('name = "rotate-token"', 'name = "other"'))).toBe(
      'name "other" is not the file\'s name "rotate-token"',
    );
  });
});

describe("findFormula", () => {
  const files = new Map([
    [`${FORMULAS_DIR}rotate-token.md`, ROTATE],
    [`${FORMULAS_DIR}backup.toml`, 'name = "backup"'],
    [`${FORMULAS_DIR}broken.md`, "---\nname: broken\n---\n"],
    [`${FORMULAS_DIR}rotate.toml`, ROTATE_TOML.replace('"rotate-token"', '"rotate"')],
    [`${FORMULAS_DIR}twice.md`, ROTATE.replace("rotate-token", "twice")],
    [`${FORMULAS_DIR}twice.toml`, ROTATE_TOML.replace('"rotate-token"', '"twice"')],
  ]);

  it("finds a markdown or a TOML formula by name", () => {
    const found = findFormula(files, "rotate-token");
    expect(found.ok && found.formula.steps).toHaveLength(3);
    const toml = findFormula(files, "rotate");
    expect(toml.ok && toml.formula.steps.map((s) => s.id)).toEqual(["check", "rotate", "report"]);
  });

  it("names the file and the problem when it cannot use one", () => {
    expect(findFormula(files, "backup")).toMatchObject({
      ok: false,
      error: /^\.conveyor\/formulas\/backup\.toml: /,
    });
    expect(findFormula(files, "broken")).toMatchObject({
      ok: false,
      error: /^\.conveyor\/formulas\/broken\.md: frontmatter: /,
    });
    expect(findFormula(files, "twice")).toEqual({
      ok: false,
      error: "two formulas named twice (twice.md and twice.toml): keep one",
    });
    expect(findFormula(files, "missing")).toEqual({
      ok: false,
      error: "no formula .conveyor/formulas/missing.md (or .toml) on the default branch",
    });
    expect(findFormula(files, "../etc")).toMatchObject({ ok: false });
  });

  it("lists every formula of the directory, and the files it cannot use", () => {
    const { formulas, problems } = formulaCatalog(files);
    expect(formulas.map((f) => f.name)).toEqual(["rotate", "rotate-token"]);
    expect(problems.map((p) => p.name)).toEqual(["backup", "broken", "twice"]);
  });
});

describe("missingSecrets", () => {
  const formula = { name: "rotate-token", secrets: ["DEPLOY_TOKEN", "CDN_KEY"] };
  it("names the declared secrets the project's actionSecrets lack, in one line", () => {
    expect(missingSecrets(formula, { DEPLOY_TOKEN: "x", CDN_KEY: "y" })).toBeNull();
    expect(missingSecrets(formula, { DEPLOY_TOKEN: "x" })).toBe(
      "formula rotate-token needs the project secret CDN_KEY, which the project lacks: add it to its actionSecrets",
    );
    expect(missingSecrets(formula, undefined)).toBe(
      "formula rotate-token needs the project secrets DEPLOY_TOKEN, CDN_KEY, which the project lacks: add them to its actionSecrets",
    );
  });
});

describe("formulaOf", () => {
  it("reads a Formula line, case-insensitively, or a formula/ label", () => {
    expect(formulaOf("Rotate it.\n\nFormula: rotate-token\n", [])).toEqual({
      kind: "named",
      name: "rotate-token",
    });
    expect(formulaOf("formula:`rotate-token`", [])).toEqual({ kind: "named", name: "rotate-token" });
    expect(formulaOf("Rotate it.", ["action", "formula/rotate-token"])).toEqual({
      kind: "named",
      name: "rotate-token",
    });
    expect(formulaOf("Formula: rotate-token", ["formula/rotate-token"])).toEqual({
      kind: "named",
      name: "rotate-token",
    });
  });

  it("names none, or reports a contradiction or a bad name", () => {
    expect(formulaOf("The formula: is not here inline", [])).toEqual({ kind: "none" });
    expect(formulaOf("Formula: a\nFormula: b", [])).toEqual({
      kind: "invalid",
      error: "the issue names more than one formula: a, b",
    });
    expect(formulaOf("Formula: a", ["formula/b"])).toMatchObject({ kind: "invalid" });
    expect(formulaOf("Formula: ../x", [])).toEqual({
      kind: "invalid",
      error: '"../x" is not a formula name',
    });
  });
});
