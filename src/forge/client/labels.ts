import { hasStatus } from "./errors.ts";
import type { LabelSpec } from "./types.ts";

export interface RepoLabel {
  id: number;
  name: string;
}

export interface NormalizedLabel {
  name: string;
  /** Six lowercase hex digits, no `#`. */
  color: string;
  description: string;
}

export const DEFAULT_LABEL_COLOR = "ededed";

export function normalizeLabel(label: string | LabelSpec): NormalizedLabel {
  const spec = typeof label === "string" ? { name: label } : label;
  const color = (spec.color ?? DEFAULT_LABEL_COLOR).replace(/^#/, "").toLowerCase();
  if (!/^[0-9a-f]{6}$/.test(color))
    throw new RangeError(`label ${spec.name}: color must be 6 hex digits: ${color}`);
  return { name: spec.name, color, description: spec.description ?? "" };
}

/** Exact name first; GitHub matches label names case-insensitively, so fall back to that. */
export function findLabel<L extends RepoLabel>(labels: readonly L[], name: string): L | undefined {
  return labels.find((label) => label.name === name) ?? labels.find((label) => sameName(label.name, name));
}

function sameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

export interface LabelStore {
  list(): Promise<RepoLabel[]>;
  create(label: NormalizedLabel): Promise<RepoLabel>;
}

/**
 * Resolves every wanted label to the repository's label, creating the missing ones. Two callers creating
 * the same label at once is not an error: the loser's 409/422 is settled by reading the list again.
 */
export async function ensureRepoLabels(
  store: LabelStore,
  wanted: ReadonlyArray<string | LabelSpec>,
): Promise<RepoLabel[]> {
  const specs = wanted.map(normalizeLabel);
  const existing = await store.list();
  let raced: unknown;
  for (const spec of specs) {
    if (findLabel(existing, spec.name)) continue;
    try {
      existing.push(await store.create(spec));
    } catch (error) {
      if (!hasStatus(error, 409, 422)) throw error;
      raced ??= error;
    }
  }
  const final = raced === undefined ? existing : await store.list();
  return specs.map((spec) => {
    const label = findLabel(final, spec.name);
    if (!label) throw raced ?? new Error(`label ${spec.name} missing right after creating it`);
    return label;
  });
}
