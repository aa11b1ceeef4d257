import type { Issue } from "../state.ts";
import { type Changes, type IssueAction, issuePayload, pullPayload } from "../webhooks/payloads.ts";
import type { RepoContext } from "./context.ts";

/** The webhook for a change to an issue or a pull request, under the event type Gitea uses for it. */
export function notifyIssue(ctx: RepoContext, issue: Issue, action: IssueAction, changes?: Changes): void {
  const { forge, repo, doer } = ctx;
  const labels = action === "label_updated" || action === "label_cleared";
  if (issue.pull) {
    const payload = pullPayload(forge.render, repo, issue, action, doer, { changes });
    forge.hooks.emit(repo, labels ? "pull_request_label" : "pull_request", payload);
  } else {
    forge.hooks.emit(
      repo,
      labels ? "issue_label" : "issues",
      issuePayload(forge.render, repo, issue, action, doer, changes),
    );
  }
}

/** Title, body and state edits as Gitea notifies them: one `edited` per field, then `closed` / `reopened`. */
export function applyIssueEdit(
  ctx: RepoContext,
  issue: Issue,
  edit: { title?: string; body?: string; state?: "open" | "closed" },
): void {
  const now = ctx.forge.store.now();
  if (edit.title !== undefined && edit.title !== issue.title) {
    const from = issue.title;
    Object.assign(issue, { title: edit.title, updatedAt: now });
    notifyIssue(ctx, issue, "edited", { title: { from } });
  }
  if (edit.body !== undefined && edit.body !== issue.body) {
    const from = issue.body;
    Object.assign(issue, { body: edit.body, updatedAt: now });
    notifyIssue(ctx, issue, "edited", { body: { from } });
  }
  if (edit.state !== undefined && edit.state !== issue.state) {
    Object.assign(issue, {
      state: edit.state,
      closedAt: edit.state === "closed" ? now : null,
      updatedAt: now,
    });
    notifyIssue(ctx, issue, edit.state === "closed" ? "closed" : "reopened");
  }
}
