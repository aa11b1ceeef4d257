/**
 * Approve, reject, retry, abandon, accept: buttons that send lifecycle events, offered only in the states where
 * the lifecycle table accepts them. Reject declines a protected-path merge, which abandons the issue; accept
 * carries out the triage's proposed step, and sits beside the proposal (pages/proposal.tsx).
 */
import { type EventType, edges, type LifecycleEvent } from "../domain/lifecycle.ts";
import type { Action } from "./forms.ts";
import { issuePath } from "./layout.tsx";

const OPERATOR_EVENTS = {
  approve: "human_approval",
  reject: "abandon",
  retry: "retry",
  abandon: "abandon",
  accept: "accept",
} as const satisfies Record<Action, EventType>;

const LABELS: Record<Action, string> = {
  approve: "Approve",
  reject: "Reject",
  retry: "Retry",
  abandon: "Abandon",
  accept: "Accept",
};

const statesAccepting = (event: EventType) =>
  new Set<string>(edges().flatMap((e) => (e.event === event ? [e.from] : [])));
const ACCEPTING = {
  human_approval: statesAccepting("human_approval"),
  retry: statesAccepting("retry"),
  abandon: statesAccepting("abandon"),
};

/** `inVault`: the approval waits on a pending vault item, which its own form decides (listed once). */
export function actionsFor(state: string, inVault = false): Action[] {
  const approvable = ACCEPTING.human_approval.has(state) && !inVault;
  return [
    ...(approvable ? (["approve", "reject"] as const) : []),
    ...(ACCEPTING.retry.has(state) ? (["retry"] as const) : []),
    ...(!approvable && ACCEPTING.abandon.has(state) ? (["abandon"] as const) : []),
  ];
}

export const eventFor = (action: Action, by: string): LifecycleEvent => ({
  type: OPERATOR_EVENTS[action],
  by,
});

export const actionLabel = (action: Action) => LABELS[action];

type FormProps = { project: string; number: number; csrf: string; next: string };

export function ActionButtons(props: FormProps & { state: string; inVault?: boolean }) {
  return <ActionForm {...props} actions={actionsFor(props.state, props.inVault)} />;
}

/** One form of `actions` buttons for the issue: each submission applies its action once (its key). */
export function ActionForm(props: FormProps & { actions: readonly Action[] }) {
  const { actions } = props;
  if (actions.length === 0) return null;
  return (
    <form method="post" action={`${issuePath(props.project, props.number)}/actions`} class="actions">
      <input type="hidden" name="csrf" value={props.csrf} />
      <input type="hidden" name="key" value={crypto.randomUUID()} />
      <input type="hidden" name="next" value={props.next} />
      {actions.map((action) => (
        <button type="submit" name="action" value={action} class={`action-${action}`}>
          {LABELS[action]}
        </button>
      ))}
    </form>
  );
}
