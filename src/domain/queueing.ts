import { sameLogin } from "./logins.ts";

/**
 * Who queues an issue: only a user with write access may put work in front of the agents. Pure: the caller
 * asks the forge for that user's permission.
 */

export type QueueingEvent = {
  action: string;
  /** The label added, when the forge names it. */
  label: string | null;
  sender: string;
  issue: { author: string };
};

/**
 * The user whose write access decides whether this issue event queues the issue's current text, or null when
 * the event queues nothing of its own (a dependency regate, another label). A label that came with the issue
 * (an issue template) is the author's doing; Gitea's `label_updated` does not say which label changed, so its
 * sender answers for the whole set; an edit is its sender's text. An event Conveyor's own account (`account`)
 * sent is never a writer's: its label changes (every one a `label_updated` on Gitea) and its body edits (an
 * agent's `link_dependency`) would otherwise queue, or re-brief, whatever text the issue holds then.
 */
export function queuer(event: QueueingEvent, backlog: string, account: string): string | null {
  if (sameLogin(event.sender, account)) return null;
  switch (event.action) {
    case "opened":
      return event.issue.author;
    case "labeled":
      return event.label === backlog ? event.sender : null;
    case "labels_updated":
    case "edited":
    case "reopened":
      return event.sender;
    default:
      return null;
  }
}

/** An issue outside the lifecycle enters it only with a writer's text: without one, nothing is sent. */
export const needsWriter = (state: string | undefined): boolean => state === undefined || state === "new";
