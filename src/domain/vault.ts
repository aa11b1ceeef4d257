/**
 * The vault: a gate for dangerous or irreversible actions. An item is requested (an action's dangerous step,
 * an agent's output its definition marks dangerous, a merge touching protected paths), classified under a
 * written policy, and decided once: approved (then fired), rejected, or expired. An issue that stops waiting
 * on its item (it left the state that asked) withdraws it: nobody may decide it any more, and an approval
 * nothing acted on never counts as fired. Every decision is audited with who made it. Pure: the ProjectDO
 * (durable-objects/project/vault.ts) applies it.
 */

export const VAULT_KINDS = ["action_step", "agent_output", "protected_merge"] as const;
export type VaultKind = (typeof VAULT_KINDS)[number];

export const VAULT_STATES = ["pending", "approved", "fired", "rejected", "expired", "withdrawn"] as const;
export type VaultState = (typeof VAULT_STATES)[number];

/** Who asked: an issue (an action's step, a held merge) or an agent run's requested output. */
export type Requester =
  | { type: "issue"; issue: number; step?: string }
  | { type: "agent_run"; runId: string; output: number };

/** The classifier's answer under the written policy. */
export type ClassifierVerdict = { verdict: "approve" | "reject" | "ask"; reason: string };

/** Who decided: a forge login, `operator` (API, dashboard, CLI), `policy` (the classifier) or `timeout`. */
export type Decider = string;
export const POLICY = "policy";
export const TIMEOUT = "timeout";
export const OPERATOR = "operator";

export type AuditAction =
  | "requested"
  | "classified"
  | "approved"
  | "rejected"
  | "expired"
  | "fired"
  | "withdrawn";
export type AuditEntry = { action: AuditAction; by: Decider; at: number; reason?: string };

export type VaultItem = {
  id: string;
  kind: VaultKind;
  requester: Requester;
  title: string;
  payload: unknown;
  state: VaultState;
  verdict: ClassifierVerdict | null;
  createdAt: number;
  expiresAt: number;
  audit: AuditEntry[];
};

export type VaultEvent =
  | { type: "classified"; verdict: ClassifierVerdict; at: number }
  | { type: "approve"; by: Decider; reason?: string; at: number }
  | { type: "reject"; by: Decider; reason?: string; at: number }
  | { type: "expire"; at: number }
  /** The approved action was carried out (its requester told): the end of an approved item. */
  /** `reason`: what fired it, when that is not the approval itself (an action step's job). */
  | { type: "fired"; at: number; reason?: string }
  /** Its requester no longer waits on it (an issue that left the state that asked): `reason` says why. */
  | { type: "withdraw"; at: number; reason: string };

/** A decision the requester hears: approved (once fired), rejected or expired. */
export type Decision = "approved" | "rejected" | "expired";

/** An item without its payload: what crosses an RPC boundary (a payload of any shape cannot be typed there). */
export type VaultItemHead = Omit<VaultItem, "payload">;

export const itemHead = ({ payload: _, ...head }: VaultItem): VaultItemHead => head;

export type VaultOutcome = { ok: true; item: VaultItem } | { ok: false; reason: string };

const HOUR = 60 * 60_000;
/** A pending item not decided within this is rejected as expired (a project's `vault.expiryMs`). */
export const DEFAULT_VAULT_EXPIRY_MS = 48 * HOUR;

export function newItem(
  request: { id: string; kind: VaultKind; requester: Requester; title: string; payload: unknown },
  now: number,
  expiryMs: number,
): VaultItem {
  return {
    ...request,
    state: "pending",
    verdict: null,
    createdAt: now,
    expiresAt: now + expiryMs,
    audit: [{ action: "requested", by: requesterName(request.requester), at: now }],
  };
}

export function requesterName(requester: Requester): string {
  return requester.type === "issue"
    ? `issue #${requester.issue}${requester.step ? ` (${requester.step})` : ""}`
    : `agent run ${requester.runId} (output ${requester.output})`;
}

const ok = (item: VaultItem): VaultOutcome => ({ ok: true, item });
const no = (reason: string): VaultOutcome => ({ ok: false, reason });
const at = (ms: number) => new Date(ms).toISOString();

/** Who decided an item that is no longer pending, and how it ended. */
function settled(item: VaultItem): string {
  const last = item.audit.findLast((e) => e.action !== "fired" && e.action !== "classified");
  const by = last?.by ?? "unknown";
  switch (item.state) {
    case "approved":
      return `${item.id} is already approved by ${by} and about to fire`;
    case "fired":
      return `${item.id} was approved by ${by} and has fired`;
    case "rejected":
      return `${item.id} was rejected by ${by}`;
    case "expired":
      return `${item.id} expired at ${at(item.expiresAt)} with nobody deciding`;
    case "withdrawn":
      return `${item.id} was withdrawn: ${item.audit.findLast((e) => e.action === "withdrawn")?.reason ?? "its requester no longer waits on it"}`;
    case "pending":
      return `${item.id} is pending`;
  }
}

const audited = (item: VaultItem, state: VaultState, entry: AuditEntry): VaultItem => ({
  ...item,
  state,
  audit: [...item.audit, entry],
});

const withReason = (reason: string | undefined) => (reason ? { reason } : {});

/** Applies one event to an item: the next item, or a refusal saying why. Never throws. */
export function decide(item: VaultItem, event: VaultEvent): VaultOutcome {
  if (event.type === "withdraw") {
    // An approval nothing acted on is withdrawn too: it never fired.
    if (item.state !== "pending" && item.state !== "approved") return no(settled(item));
    const entry = { action: "withdrawn" as const, by: requesterName(item.requester), at: event.at };
    return ok(audited(item, "withdrawn", { ...entry, reason: event.reason }));
  }
  if (item.state !== "pending") {
    if (item.state === "approved" && event.type === "fired") {
      // Fired on the approval of whoever approved it.
      const approver = item.audit.findLast((e) => e.action === "approved")?.by ?? OPERATOR;
      return ok(
        audited(item, "fired", { action: "fired", by: approver, at: event.at, ...withReason(event.reason) }),
      );
    }
    return no(settled(item));
  }
  switch (event.type) {
    case "classified":
      if (item.verdict) return no(`${item.id} is already classified (${item.verdict.verdict})`);
      return ok({
        ...item,
        verdict: event.verdict,
        audit: [
          ...item.audit,
          {
            action: "classified",
            by: POLICY,
            at: event.at,
            reason: `${event.verdict.verdict}: ${event.verdict.reason}`,
          },
        ],
      });
    case "approve":
    case "reject": {
      // A decision that arrives after the deadline is too late, even before the alarm said so.
      if (event.at >= item.expiresAt) return no(`${item.id} expired at ${at(item.expiresAt)}`);
      const state = event.type === "approve" ? "approved" : "rejected";
      return ok(
        audited(item, state, { action: state, by: event.by, at: event.at, ...withReason(event.reason) }),
      );
    }
    case "expire":
      if (event.at < item.expiresAt) return no(`${item.id} does not expire before ${at(item.expiresAt)}`);
      return ok(audited(item, "expired", { action: "expired", by: TIMEOUT, at: event.at }));
    case "fired":
      return no(`${item.id} is pending: only an approved item fires`);
  }
}

/** The decision its requester hears (an approved item's as it fires), once there is one: null while pending. */
export function decisionOf(item: VaultItem): { decision: Decision; by: Decider; reason?: string } | null {
  const action = item.state === "fired" ? "approved" : item.state;
  if (action !== "approved" && action !== "rejected" && action !== "expired") return null;
  const entry = item.audit.findLast((e) => e.action === action);
  if (!entry) return null;
  return { decision: action, by: entry.by, ...withReason(entry.reason) };
}

/** A project's policy: which kinds the classifier may approve without a human. */
export type VaultPolicy = { autoApprove: readonly VaultKind[] };

/** By default nothing is approved without a human. */
export const DEFAULT_VAULT_POLICY: VaultPolicy = { autoApprove: [] };

/** Kinds no setting lets the classifier approve. */
export const NEVER_AUTO_APPROVED: readonly VaultKind[] = ["protected_merge"];

export type Route =
  | { action: "approve"; reason: string }
  | { action: "reject"; reason: string }
  | { action: "ask"; reason: string };

/**
 * What the classifier's verdict does. It may reject on its own; it approves only kinds the project lets it
 * (never a protected merge); anything else, and any failure to classify (given here as `ask`), asks a human.
 */
export function route(kind: VaultKind, verdict: ClassifierVerdict, policy: VaultPolicy): Route {
  switch (verdict.verdict) {
    case "reject":
      return { action: "reject", reason: verdict.reason };
    case "ask":
      return { action: "ask", reason: verdict.reason };
    case "approve":
      if (NEVER_AUTO_APPROVED.includes(kind)) {
        return {
          action: "ask",
          reason: `the classifier would approve, but a ${kind} always needs a human: ${verdict.reason}`,
        };
      }
      if (!policy.autoApprove.includes(kind)) {
        return {
          action: "ask",
          reason: `the classifier would approve, but the project's policy lets no ${kind} be approved without a human: ${verdict.reason}`,
        };
      }
      return { action: "approve", reason: verdict.reason };
  }
}

/** Ids humans type (`/conveyor approve v7`): `v` and the project's sequence number. */
export const vaultId = (seq: number) => `v${seq}`;
export const VAULT_ID = /^v[1-9][0-9]{0,8}$/;

/** `v7` or `7` → `v7`; anything else null. */
export function parseVaultId(text: string): string | null {
  const id = /^[0-9]+$/.test(text) ? `v${text}` : text.toLowerCase();
  return VAULT_ID.test(id) ? id : null;
}
