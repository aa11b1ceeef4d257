/**
 * Labels that drive Conveyor's lifecycle — `backlog` queues work, `in-progress`, `blocked`, `needs-human` and
 * `underspecified` say where an issue stands, `loop:*` commands it — are never an agent's to set, remove or
 * aim at. Conveyor's account is a writer on the forge: a label it adds on an agent's behalf would speak with a
 * writer's voice. A definition naming one in any output is refused at load (./definition.ts). Pure.
 */
import type { ProjectSettings } from "../projects/config.ts";

/** The lifecycle's labels under their default names; a project's own names are added (`lifecycleLabels`). */
export const LIFECYCLE_LABELS = [
  "backlog",
  "in-progress",
  "blocked",
  "needs-human",
  "underspecified",
] as const;
/** Commands as labels (`loop:abandon`), now and later. */
const COMMAND_PREFIX = "loop:";

/** The lifecycle's labels for a project: the defaults, and the names its `labels` settings give them. */
export function lifecycleLabels(labels?: ProjectSettings["labels"]): string[] {
  if (!labels) return [...LIFECYCLE_LABELS];
  const own = [labels.backlog, labels.inProgress, labels.blocked, labels.needsHuman, labels.underspecified];
  return [...new Set([...LIFECYCLE_LABELS, ...own])];
}

/** Whether `label` is one of `reserved` or a command label; forges compare label names without case. */
export function isLifecycleLabel(label: string, reserved: readonly string[]): boolean {
  const name = label.trim().toLowerCase();
  return name.startsWith(COMMAND_PREFIX) || reserved.some((r) => r.toLowerCase() === name);
}

/** Where in a definition's outputs a lifecycle label is named (`outputs.add_labels.allowedLabels: backlog`). */
export function lifecycleLabelUses(
  outputs: Readonly<Record<string, Readonly<Record<string, unknown>> | undefined>>,
  reserved: readonly string[],
): string[] {
  return Object.entries(outputs).flatMap(([type, config]) =>
    Object.entries(config ?? {}).flatMap(([key, value]) =>
      Array.isArray(value)
        ? value
            .filter(
              (label): label is string => typeof label === "string" && isLifecycleLabel(label, reserved),
            )
            .map((label) => `outputs.${type}.${key}: ${label}`)
        : [],
    ),
  );
}
