import type { Forge } from "./events.ts";
import { WebhookError } from "./payload.ts";

// Gitea/Forgejo send a grouped event name (X-*-Event) and a specific one (X-*-Event-Type). Only the specific
// one tells a PR conversation comment (`pull_request_comment`) from a review comment, whose grouped name is
// also `pull_request_comment`; grouped names are translated for forges too old to send the specific header.
const GROUPED_TO_SPECIFIC: Record<string, string> = {
  pull_request_approved: "pull_request_review_approved",
  pull_request_rejected: "pull_request_review_rejected",
  pull_request_comment: "pull_request_review_comment",
};

// Forgejo ≥ 1.21 adds X-Forgejo-* but keeps every X-Gitea-* header; older Forgejo sends only the latter.
const DELIVERY_HEADERS: Record<Forge, string[]> = {
  github: ["X-GitHub-Delivery"],
  gitea: ["X-Gitea-Delivery"],
  forgejo: ["X-Forgejo-Delivery", "X-Gitea-Delivery"],
};

const SPECIFIC_EVENT_HEADERS: Record<Forge, string[]> = {
  github: ["X-GitHub-Event"],
  gitea: ["X-Gitea-Event-Type"],
  forgejo: ["X-Forgejo-Event-Type", "X-Gitea-Event-Type"],
};

const GROUPED_EVENT_HEADERS: Record<Forge, string[]> = {
  github: [],
  gitea: ["X-Gitea-Event"],
  forgejo: ["X-Forgejo-Event", "X-Gitea-Event"],
};

export type DeliveryHeaders = {
  deliveryId: string;
  /** GitHub: X-GitHub-Event. Gitea/Forgejo: the specific event type, e.g. `pull_request_sync`. */
  eventName: string;
};

export function readDeliveryHeaders(forge: Forge, headers: Headers): DeliveryHeaders {
  const deliveryId = first(headers, DELIVERY_HEADERS[forge]);
  if (deliveryId === null) throw new WebhookError(`missing ${DELIVERY_HEADERS[forge].join(" / ")} header`);
  const specific = first(headers, SPECIFIC_EVENT_HEADERS[forge]);
  const grouped = first(headers, GROUPED_EVENT_HEADERS[forge]);
  // Gitea sends an empty grouped name for some types (e.g. `status`), so only the specific header names them.
  const eventName = specific ?? (grouped === null ? null : (GROUPED_TO_SPECIFIC[grouped] ?? grouped));
  if (eventName === null) {
    const names = [...SPECIFIC_EVENT_HEADERS[forge], ...GROUPED_EVENT_HEADERS[forge]];
    throw new WebhookError(`missing ${names.join(" / ")} header`);
  }
  return { deliveryId, eventName };
}

/** The first of `names` with a non-empty value. */
function first(headers: Headers, names: string[]): string | null {
  for (const name of names) {
    const value = headers.get(name)?.trim();
    if (value) return value;
  }
  return null;
}
