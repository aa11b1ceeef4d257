/**
 * One project setting changed by its dotted key (`parallel`, `jobs.leaseMs`, `ci.kind`), validated by the
 * same zod schema a registration is: what `conveyor project set <key> <value>` sends. Pure; the API stores it.
 */
import { z } from "zod";
import { zodMessage } from "../validation.ts";
import { type ProjectSettings, registrationSchema, settingsSchema } from "./config.ts";

export type SettingEdit = { ok: true; settings: ProjectSettings } | { ok: false; reason: string };

/** Defaults, optionals and prefaults wrap a setting's own schema; the key is about what is inside. */
function unwrap(schema: z.ZodType): z.ZodType {
  let inner = schema;
  while (
    inner instanceof z.ZodDefault ||
    inner instanceof z.ZodPrefault ||
    inner instanceof z.ZodOptional ||
    inner instanceof z.ZodNullable
  ) {
    inner = inner.unwrap() as z.ZodType;
  }
  return inner;
}

/** Every settable key: the leaves of the settings schema, and the objects above them. */
export function settingKeys(schema: z.ZodType = settingsSchema, prefix = ""): string[] {
  const inner = unwrap(schema);
  if (!(inner instanceof z.ZodObject)) return [];
  return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([key, child]) => {
    const path = `${prefix}${key}`;
    return [path, ...settingKeys(child, `${path}.`)];
  });
}

function withValue(settings: unknown, path: string[], value: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  const object = typeof settings === "object" && settings !== null ? settings : {};
  return {
    ...object,
    [head]: withValue((object as Record<string, unknown>)[head], rest, value),
  };
}

/**
 * Candidates for `value` as typed on a command line: the text itself first (so `defaultBranch 123` stays a
 * branch name), then the text read as JSON (`parallel 4`, `protectedPaths '[".ci/**"]'`, `ci.woodpeckerUrl null`).
 */
function candidates(value: unknown): unknown[] {
  if (typeof value !== "string") return [value];
  try {
    return [value, JSON.parse(value)];
  } catch {
    return [value];
  }
}

/** `settings` with `key` set to `value`, or why not; `null` removes an optional setting. */
export function editSetting(settings: ProjectSettings, key: string, value: unknown): SettingEdit {
  if (key in registrationSchema.shape && !(key in settingsSchema.shape))
    return {
      ok: false,
      reason: `${key} is part of the project's registration, not a setting: use conveyor project add`,
    };
  if (!settingKeys().includes(key))
    return { ok: false, reason: `unknown setting ${key}; settings are ${settingKeys().join(", ")}` };
  const path = key.split(".");
  let failure = "";
  for (const candidate of candidates(value)) {
    // JSON null clears an optional setting: parse without it and the default (or nothing) stands.
    const edited = withValue(settings, path, candidate === null ? undefined : candidate);
    const parsed = settingsSchema.safeParse(edited);
    if (parsed.success) return { ok: true, settings: parsed.data };
    failure = zodMessage(parsed.error);
  }
  return { ok: false, reason: failure };
}
