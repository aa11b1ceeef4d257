import { z } from "zod";
import type { IssueEvent } from "./events.ts";

// Zod pieces both payload families share. Objects strip unknown keys (they pass, unused); Go marshals nil
// slices and pointers as null and GitHub sends null for empty bodies, so optional values accept null too.

/** A user object as its login. GitHub shows deleted accounts as "ghost"; a missing user is that account. */
export const login = z
  .object({ login: z.string() })
  .nullish()
  .transform((user) => user?.login ?? "ghost");

export const repository = z.object({ full_name: z.string() });

/** A pull request's head: `repo` is where the branch lives (a fork's), null once that repository is gone. */
export const pullHead = z.object({ ref: z.string(), sha: z.string(), repo: repository.nullish() });

export const text = z
  .string()
  .nullish()
  .transform((value) => value ?? "");

/** Empty strings (Gitea's zero value) and null (GitHub's) both mean "not given". */
export const optionalText = z
  .string()
  .nullish()
  .transform((value) => (value ? value : null));

export const labelNames = z
  .array(z.object({ name: z.string() }))
  .nullish()
  .transform((labels) => (labels ?? []).map((label) => label.name));

export const issueState = z.enum(["open", "closed"]);

export const issueNumber = z.number().int().positive();

/** An issue as its events carry it, with the forge's times (ISO 8601) and comment count where it sends them. */
export const issueFields = z
  .object({
    number: issueNumber,
    title: z.string(),
    body: text,
    state: issueState,
    labels: labelNames,
    user: login,
    created_at: optionalText,
    updated_at: optionalText,
    closed_at: optionalText,
    comments: z.number().int().min(0).nullish(),
  })
  .transform(({ user, created_at, updated_at, closed_at, comments, ...issue }): IssueEvent["issue"] => ({
    ...issue,
    author: user,
    createdAt: created_at,
    updatedAt: updated_at,
    closedAt: closed_at,
    ...(comments != null && { comments }),
  }));

/**
 * A pull request's state, the forge's times and its comment count, as its events carry them (for the
 * mirror); a partial payload may leave any of them out.
 */
export const pullDates = {
  state: issueState.nullish(),
  created_at: optionalText,
  updated_at: optionalText,
  closed_at: optionalText,
  comments: z.number().int().min(0).nullish(),
};

export const datedPull = (pr: {
  state?: "open" | "closed" | null;
  created_at: string | null;
  updated_at: string | null;
  closed_at: string | null;
  comments?: number | null;
}) => ({
  state: pr.state ?? null,
  createdAt: pr.created_at,
  updatedAt: pr.updated_at,
  closedAt: pr.closed_at,
  ...(pr.comments != null && { comments: pr.comments }),
});

export const actionOnly = z.object({ action: z.string() });

export const origin = { repository, sender: login };
