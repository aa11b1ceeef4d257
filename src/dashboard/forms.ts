/** The dashboard's forms, parsed with zod like every other boundary. */
import { z } from "zod";

/** Where to go after a form: a path inside the dashboard, never another site. */
export const localPath = z.string().regex(/^\/dashboard(?:[/?][^\s\\]*)?$/, "next must be a dashboard path");

export const loginForm = z.object({
  token: z.string().min(1, "the operator token is required").max(500),
  next: localPath.optional().catch(undefined),
});

export const ACTIONS = ["approve", "reject", "retry", "abandon", "accept"] as const;
export type Action = (typeof ACTIONS)[number];

export const actionForm = z.object({
  action: z.enum(ACTIONS),
  /** Rendered into the form: a resubmitted form applies its action once. */
  key: z.uuid(),
  next: localPath.optional(),
});

/** The operator's decision on a vault item; an empty reason is none. */
export const vaultForm = z.object({
  decision: z.enum(["approve", "reject"]),
  reason: z
    .string()
    .max(500)
    .optional()
    .transform((r) => r?.trim() || undefined),
  /** The page the form was on: approvals, the vault page, the issue's. */
  next: localPath.optional(),
});
