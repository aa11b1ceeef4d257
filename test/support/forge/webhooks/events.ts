import type { Hook } from "../state.ts";

/** Gitea's specific event types (X-*-Event-Type) that the local forge emits. */
export type HookEventType =
  | "push"
  | "issues"
  | "issue_label"
  | "issue_comment"
  | "pull_request"
  | "pull_request_label"
  | "pull_request_sync"
  | "pull_request_comment"
  | "pull_request_review_approved"
  | "pull_request_review_rejected"
  | "pull_request_review_comment";

// `grouped`: X-*-Event (Gitea's HookEventType.Event()). `subscribedBy`: the names in a hook's `events` that
// select it; "issues" and "pull_request" also select every issue_* / pull_request_* type, as on Gitea.
const EVENTS: Record<HookEventType, { grouped: string; subscribedBy: string[] }> = {
  push: { grouped: "push", subscribedBy: ["push"] },
  issues: { grouped: "issues", subscribedBy: ["issues", "issues_only"] },
  issue_label: { grouped: "issues", subscribedBy: ["issues", "issue_label"] },
  issue_comment: { grouped: "issue_comment", subscribedBy: ["issues", "issue_comment"] },
  pull_request: { grouped: "pull_request", subscribedBy: ["pull_request", "pull_request_only"] },
  pull_request_label: { grouped: "pull_request", subscribedBy: ["pull_request", "pull_request_label"] },
  pull_request_sync: { grouped: "pull_request", subscribedBy: ["pull_request", "pull_request_sync"] },
  pull_request_comment: { grouped: "issue_comment", subscribedBy: ["pull_request", "pull_request_comment"] },
  pull_request_review_approved: {
    grouped: "pull_request_approved",
    subscribedBy: ["pull_request", "pull_request_review"],
  },
  pull_request_review_rejected: {
    grouped: "pull_request_rejected",
    subscribedBy: ["pull_request", "pull_request_review"],
  },
  pull_request_review_comment: {
    grouped: "pull_request_comment",
    subscribedBy: ["pull_request", "pull_request_review"],
  },
};

export function groupedEvent(type: HookEventType): string {
  return EVENTS[type].grouped;
}

export function hookWants(hook: Hook, type: HookEventType): boolean {
  return hook.active && EVENTS[type].subscribedBy.some((name) => hook.events.includes(name));
}
