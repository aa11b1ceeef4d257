import { z } from "zod";
import { ApiError, json, notFound, parseBody, type Reply } from "../http.ts";
import type { Issue, Label } from "../state.ts";
import { intParam, issueParam, type RepoContext, requireMode } from "./context.ts";
import { labelOf } from "./dialect.ts";
import { knownLabelIds } from "./issues.ts";
import { notifyIssue } from "./notify.ts";
import { paginate } from "./pagination.ts";

const createLabelOption = z.object({
  name: z.string().min(1),
  color: z.string(),
  description: z.string().optional(),
});
const editLabelOption = z.object({
  name: z.string().min(1).optional(),
  color: z.string().optional(),
  description: z.string().optional(),
});
const issueLabelsOption = z.object({ labels: z.array(z.union([z.number().int(), z.string()])) });

/** Gitea's NormalizeColor: `#rgb`, `#rrggbb`, with or without `#`; stored as six lowercase digits. */
function normalizeColor(color: string): string {
  const hex = color.replace(/^#/, "").toLowerCase();
  if (/^[0-9a-f]{6}$/.test(hex)) return hex;
  if (/^[0-9a-f]{3}$/.test(hex)) return [...hex].map((digit) => digit + digit).join("");
  throw new ApiError(422, `invalid color: ${JSON.stringify(color)}`);
}

/** Sorted by name, paginated. */
export function listLabels(ctx: RepoContext): Reply {
  const labels = [...ctx.repo.labels].sort((a, b) => a.name.localeCompare(b.name));
  const page = paginate(ctx, labels);
  return json(
    200,
    page.items.map((label) => labelOf(ctx, label)),
    page.headers,
  );
}

/** Like Gitea, a second label with the same name is created, not refused. */
export function createLabel(ctx: RepoContext): Reply {
  requireMode(ctx, "write");
  const input = parseBody(createLabelOption, ctx.body);
  const label: Label = {
    id: ctx.forge.store.nextId(),
    name: input.name,
    color: normalizeColor(input.color),
    description: input.description ?? "",
  };
  ctx.repo.labels.push(label);
  return json(201, labelOf(ctx, label));
}

function labelParam(ctx: RepoContext): Label {
  const label = ctx.repo.labels.find((candidate) => candidate.id === intParam(ctx, "id"));
  if (!label) throw notFound();
  return label;
}

export function getLabel(ctx: RepoContext): Reply {
  return json(200, ctx.forge.render.label(ctx.repo, labelParam(ctx)));
}

export function editLabel(ctx: RepoContext): Reply {
  requireMode(ctx, "write");
  const label = labelParam(ctx);
  const input = parseBody(editLabelOption, ctx.body);
  if (input.name !== undefined) label.name = input.name;
  if (input.color !== undefined) label.color = normalizeColor(input.color);
  if (input.description !== undefined) label.description = input.description;
  return json(200, ctx.forge.render.label(ctx.repo, label));
}

export function deleteLabel(ctx: RepoContext): Reply {
  requireMode(ctx, "write");
  const label = labelParam(ctx);
  ctx.repo.labels = ctx.repo.labels.filter((candidate) => candidate !== label);
  for (const issue of ctx.repo.issues) issue.labelIds = issue.labelIds.filter((id) => id !== label.id);
  return { status: 204 };
}

export function getIssueLabels(ctx: RepoContext): Reply {
  return json(200, ctx.forge.render.issueLabels(ctx.repo, issueParam(ctx)));
}

/** POST: the given label ids are added (ids the repository does not have are dropped); 200 with all labels. */
export function addIssueLabels(ctx: RepoContext): Reply {
  const issue = writableIssue(ctx);
  const ids = knownLabelIds(ctx, parseBody(issueLabelsOption, ctx.body).labels);
  setLabels(
    ctx,
    issue,
    [...issue.labelIds, ...ids.filter((id) => !issue.labelIds.includes(id))],
    "label_updated",
  );
  return json(200, ctx.forge.render.issueLabels(ctx.repo, issue));
}

/** PUT: the labels become exactly the given ones. */
export function replaceIssueLabels(ctx: RepoContext): Reply {
  const issue = writableIssue(ctx);
  setLabels(ctx, issue, knownLabelIds(ctx, parseBody(issueLabelsOption, ctx.body).labels), "label_updated");
  return json(200, ctx.forge.render.issueLabels(ctx.repo, issue));
}

/** DELETE all: Gitea's `label_cleared`. */
export function clearIssueLabels(ctx: RepoContext): Reply {
  setLabels(ctx, writableIssue(ctx), [], "label_cleared");
  return { status: 204 };
}

/** DELETE one: 422 for a label the repository does not have, 204 (and nothing happens) when not on the issue. */
export function removeIssueLabel(ctx: RepoContext): Reply {
  const issue = writableIssue(ctx);
  const id = intParam(ctx, "id");
  // Not an id at all: no such route (GitHub's by-name path), as Gitea's router answers.
  if (Number.isNaN(id)) throw notFound();
  if (!ctx.repo.labels.some((label) => label.id === id))
    throw new ApiError(422, `label does not exist [id: ${id}]`);
  setLabels(
    ctx,
    issue,
    issue.labelIds.filter((existing) => existing !== id),
    "label_updated",
  );
  return { status: 204 };
}

function writableIssue(ctx: RepoContext): Issue {
  const issue = issueParam(ctx);
  requireMode(ctx, "write");
  return issue;
}

/** Sets the labels and sends the webhook when they changed. */
function setLabels(
  ctx: RepoContext,
  issue: Issue,
  ids: number[],
  action: "label_updated" | "label_cleared",
): void {
  const same = ids.length === issue.labelIds.length && ids.every((id) => issue.labelIds.includes(id));
  if (same) return;
  issue.labelIds = ids;
  issue.updatedAt = ctx.forge.store.now();
  notifyIssue(ctx, issue, action);
}
