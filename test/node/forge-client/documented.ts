/**
 * Checks against a forge's documented answers (test/fixtures/forge-api/: excerpts of GitHub's OpenAPI
 * description and Gitea's Swagger): that what a client's zod schema requires of an operation's answer is
 * what the operation documents, and that an answer (the local forge's) has the documented shape.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";

/** The reduced schema of an excerpt: type, nullable, required, properties, items, enum, oneOf/anyOf/allOf. */
export type Shape = {
  type?: string;
  nullable?: boolean;
  required?: string[];
  properties?: Record<string, Shape>;
  items?: Shape;
  enum?: unknown[];
  oneOf?: Shape[];
  anyOf?: Shape[];
  allOf?: Shape[];
  $ref?: string;
  /** A schema the excerpt does not keep: anything. */
  "x-not-kept"?: string;
};

export type Documented = {
  /** GitHub's description says which fields are required and which may be null; Gitea's Swagger does not. */
  strict: boolean;
  operations: Record<string, { operationId: string; response: Shape }>;
  schemas: Record<string, Shape>;
};

export function documented(forge: "github" | "gitea"): Documented {
  const url = new URL(`../../fixtures/forge-api/${forge}.json`, import.meta.url);
  return { strict: forge === "github", ...JSON.parse(readFileSync(url, "utf8")) };
}

function resolve(doc: Documented, shape: Shape): Shape {
  let current = shape;
  for (let depth = 0; current.$ref && depth < 20; depth++) {
    const name = current.$ref.replace("#/schemas/", "");
    const target = doc.schemas[name];
    if (!target) throw new Error(`excerpt has no schema ${name}`);
    current = target;
  }
  if (!current.allOf) return current;
  // allOf: every part's properties and requirements together.
  const parts = current.allOf.map((part) => resolve(doc, part));
  return {
    type: "object",
    properties: Object.assign({}, ...parts.map((part) => part.properties ?? {})),
    required: parts.flatMap((part) => part.required ?? []),
  };
}

const alternatives = (doc: Documented, shape: Shape): Shape[] => {
  const resolved = resolve(doc, shape);
  const options = resolved.oneOf ?? resolved.anyOf;
  return options ? options.flatMap((option) => alternatives(doc, option)) : [resolved];
};

const anything = (shape: Shape) => shape["x-not-kept"] !== undefined || (!shape.type && !shape.$ref);

// --- the client's schema against the documentation -------------------------------------------------------

type Json = {
  type?: string | string[];
  properties?: Record<string, Json>;
  required?: string[];
  items?: Json;
  anyOf?: Json[];
};

/** The client's requirements of an answer: its zod schema's input side as JSON Schema. */
export const requirementsOf = (schema: z.ZodType): Json =>
  z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Json;

const jsonTypes = (json: Json): string[] =>
  json.anyOf
    ? json.anyOf.flatMap(jsonTypes)
    : json.type === undefined
      ? []
      : Array.isArray(json.type)
        ? json.type
        : [json.type];

/** The client's alternatives for a value that is not null. */
function nonNull(json: Json): Json[] {
  if (json.anyOf) return json.anyOf.flatMap(nonNull);
  if (json.type === undefined) return [json];
  const types = jsonTypes(json).filter((type) => type !== "null");
  return types.length === 0 ? [] : [{ ...json, type: types.length === 1 ? types[0] : types }];
}

const fits = (clientType: string, docType: string | undefined) =>
  docType === undefined ||
  clientType === docType ||
  (clientType === "number" && docType === "integer") ||
  (clientType === "integer" && docType === "number");

/**
 * Where the client needs more of an answer than the operation documents: a field it requires that the
 * documented shape does not have (GitHub: does not require), a non-null it needs where the documentation
 * allows null (GitHub), or another type. Empty: the client reads only what the operation promises.
 */
export function unmetNeeds(doc: Documented, client: Json, shape: Shape, path = "(answer)"): string[] {
  const problems: string[] = [];
  const wanted = nonNull(client);
  const acceptsNull = jsonTypes(client).includes("null");
  const options = alternatives(doc, shape);
  for (const option of options) {
    if (anything(option)) continue;
    if (doc.strict && option.nullable && !acceptsNull)
      problems.push(`${path}: documented nullable, read as never null`);
    // The answer is one of the client's alternatives: the option must fit at least one.
    const fitting = wanted.filter((want) => jsonTypes(want).some((t) => fits(t, option.type)));
    if (fitting.length === 0) {
      problems.push(`${path}: documented ${option.type}, read as ${jsonTypes(client).join("|")}`);
      continue;
    }
    const perAlternative = fitting.map((want) => objectNeeds(doc, want, option, path));
    if (!perAlternative.some((list) => list.length === 0)) problems.push(...(perAlternative[0] ?? []));
  }
  return problems;
}

function objectNeeds(doc: Documented, want: Json, option: Shape, path: string): string[] {
  const problems: string[] = [];
  if (want.items && option.items) problems.push(...unmetNeeds(doc, want.items, option.items, `${path}[]`));
  for (const [name, field] of Object.entries(want.properties ?? {})) {
    const documentedField = option.properties?.[name];
    const needed = want.required?.includes(name) ?? false;
    if (!documentedField) {
      if (needed) problems.push(`${path}.${name}: required by the client, not in the documented answer`);
      continue;
    }
    if (needed && doc.strict && !(option.required ?? []).includes(name))
      problems.push(`${path}.${name}: required by the client, optional in the documented answer`);
    problems.push(...unmetNeeds(doc, field, documentedField, `${path}.${name}`));
  }
  return problems;
}

// --- an answer against the documentation -----------------------------------------------------------------

const typeOf = (value: unknown) =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "array"
      : Number.isInteger(value)
        ? "integer"
        : typeof value;

/**
 * Where an answer leaves its documented shape: a field of another type, and where the documentation says
 * so (GitHub), a null where none may be, a required field missing, or a field the shape does not have.
 */
export function misfits(doc: Documented, value: unknown, shape: Shape, path = "(answer)"): string[] {
  const options = alternatives(doc, shape);
  const results = options.map((option) => misfitOne(doc, value, option, path));
  return results.some((list) => list.length === 0) ? [] : (results[0] ?? []);
}

function misfitOne(doc: Documented, value: unknown, shape: Shape, path: string): string[] {
  if (anything(shape)) return [];
  const actual = typeOf(value);
  // Swagger 2.0 has no null: Gitea sends null for any nil pointer or slice.
  if (actual === "null") return !doc.strict || shape.nullable ? [] : [`${path}: null, documented never null`];
  if (!fits(actual, shape.type) && !(actual === "integer" && shape.type === "number"))
    return [`${path}: ${actual}, documented ${shape.type}`];
  if (actual === "array" && shape.items)
    return (value as unknown[]).flatMap((item, i) =>
      misfits(doc, item, shape.items as Shape, `${path}[${i}]`),
    );
  if (actual !== "object" || !shape.properties) return [];
  const record = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const name of Object.keys(record)) {
    const field = shape.properties[name];
    if (field) problems.push(...misfits(doc, record[name], field, `${path}.${name}`));
    else if (doc.strict) problems.push(`${path}.${name}: not in the documented shape`);
  }
  const expected = doc.strict ? (shape.required ?? []) : Object.keys(shape.properties);
  for (const name of expected) if (!(name in record)) problems.push(`${path}.${name}: documented, missing`);
  return problems;
}
