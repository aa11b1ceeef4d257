/**
 * The vault's items (docs/vault.md): what each would do (an action step's command, a merge's pull request and
 * head), who asked, the classifier's verdict and the whole audit trail; a pending item has the operator's
 * approve and reject form. Listed on the approvals page (pending), the vault page (every state) and the page
 * of the issue that asked.
 */
import { type AuditEntry, VAULT_STATES, type VaultState } from "../../domain/vault.ts";
import { approvedStepSchema } from "../../formulas/approval.ts";
import type { VaultItemView } from "../../vault/queries.ts";
import { formatTime, plural } from "../format.ts";
import { issuePath, When } from "../layout.tsx";
import { agentsPath } from "./agents.tsx";

export const VAULT_PATH = "/dashboard/vault";

export function vaultPath(filter: { project?: string | undefined; state?: VaultState | undefined }): string {
  const query = new URLSearchParams({
    ...(filter.project && { project: filter.project }),
    ...(filter.state && { state: filter.state }),
  }).toString();
  return query ? `${VAULT_PATH}?${query}` : VAULT_PATH;
}

/** Where an item is shown on its project's vault page. */
export const vaultItemPath = (project: string, id: string) => `${vaultPath({ project })}#vault-${id}`;

function Requester(props: { item: VaultItemView }) {
  const { item } = props;
  const { requester } = item;
  if (requester.type === "issue")
    return (
      <a href={issuePath(item.project, requester.issue)}>
        {item.project}#{requester.issue}
        {requester.step ? ` (step ${requester.step})` : ""}
      </a>
    );
  return (
    <a href={agentsPath(item.project)}>
      {item.project}: agent run {requester.runId}, output {requester.output}
    </a>
  );
}

/** What approving it does: the command an action's step runs, the merge a held pull request gets. */
function Consequence(props: { item: VaultItemView }) {
  const { item } = props;
  if (item.kind === "action_step") {
    const step = approvedStepSchema.safeParse(item.payload);
    if (!step.success) return null;
    const { command, secrets, network, formula, version } = step.data;
    return (
      <dl class="consequence">
        <dt>runs</dt>
        <dd>{command ? <code class="command">{command}</code> : <span class="quiet">no command</span>}</dd>
        <dt>with</dt>
        <dd>
          {secrets.length > 0 ? `secrets ${secrets.join(", ")}` : "no secrets"} ·{" "}
          {network.length > 0 ? `network ${network.join(", ")}` : "no network"} · formula {formula} v{version}
        </dd>
      </dl>
    );
  }
  if (item.kind === "protected_merge") {
    const merge = item.payload as { pr?: unknown; headSha?: unknown; reason?: unknown };
    return (
      <dl class="consequence">
        <dt>merges</dt>
        <dd>
          pull request #{String(merge.pr ?? "?")} at <code>{String(merge.headSha ?? "?").slice(0, 12)}</code>
          {typeof merge.reason === "string" && <> — {merge.reason}</>}
        </dd>
      </dl>
    );
  }
  return null;
}

function Audit(props: { audit: AuditEntry[] }) {
  return (
    <ol class="audit">
      {props.audit.map((entry) => (
        <li>
          <time datetime={new Date(entry.at).toISOString()}>{formatTime(entry.at)}</time>{" "}
          <strong>{entry.action}</strong> by {entry.by}
          {entry.reason && <>: {entry.reason}</>}
        </li>
      ))}
    </ol>
  );
}

/** One item; `next`: where its form returns to. */
export function VaultItemRow(props: { item: VaultItemView; csrf: string; now: number; next: string }) {
  const { item, now } = props;
  return (
    <li class={`vault-item vault-${item.state}`} id={`vault-${item.id}`}>
      <div>
        <strong>
          {item.id} {item.title}
        </strong>{" "}
        <span class={`state vault-state-${item.state}`}>{item.state}</span>
        <div class="quiet">
          {item.kind.replace(/_/g, " ")} · asked by <Requester item={item} /> ·{" "}
          {item.state === "pending" ? (
            <>
              expires <When at={item.expiresAt} now={now} />
            </>
          ) : (
            <>
              last change <When at={item.updatedAt} now={now} />
            </>
          )}
        </div>
        <Consequence item={item} />
        {item.verdict && (
          <div class="quiet">
            classifier: {item.verdict.verdict} ({item.verdict.reason})
          </div>
        )}
        <Audit audit={item.audit} />
      </div>
      {item.state === "pending" && (
        <form method="post" action={`/dashboard/projects/${item.project}/vault/${item.id}`} class="actions">
          <input type="hidden" name="csrf" value={props.csrf} />
          <input type="hidden" name="next" value={props.next} />
          <input type="text" name="reason" placeholder="reason (for a rejection)" maxlength={500} />
          <button type="submit" name="decision" value="approve" class="action-approve">
            Approve
          </button>
          <button type="submit" name="decision" value="reject" class="action-reject">
            Reject
          </button>
        </form>
      )}
    </li>
  );
}

export function VaultItems(props: { items: VaultItemView[]; csrf: string; now: number; next: string }) {
  return (
    <ol class="list">
      {props.items.map((item) => (
        <VaultItemRow item={item} csrf={props.csrf} now={props.now} next={props.next} />
      ))}
    </ol>
  );
}

/** The approvals page's part: what waits for a decision, oldest first. */
export function VaultSection(props: { items: VaultItemView[]; csrf: string; now: number }) {
  return (
    <section>
      <h2>
        Vault: dangerous actions waiting for a decision <span class="count">{props.items.length}</span>
      </h2>
      {props.items.length === 0 && <p class="quiet">Nothing waiting.</p>}
      <VaultItems items={props.items} csrf={props.csrf} now={props.now} next="/dashboard/approvals" />
    </section>
  );
}

/** Every item, of a project or all, newest first, decided ones with how and by whom. */
export function VaultPage(props: {
  items: VaultItemView[];
  project: string | undefined;
  state: VaultState | undefined;
  csrf: string;
  now: number;
}) {
  const { project, state } = props;
  const link = (s: VaultState | undefined, text: string) =>
    s === state ? <strong>{text}</strong> : <a href={vaultPath({ project, state: s })}>{text}</a>;
  return (
    <>
      <p class="chips">
        {link(undefined, "all")}
        {VAULT_STATES.map((s) => link(s, s))}
        {project && <a href={VAULT_PATH}>every project</a>}
      </p>
      <p class="quiet">{plural(props.items.length, "item")}, newest first</p>
      <VaultItems
        items={props.items}
        csrf={props.csrf}
        now={props.now}
        next={vaultPath({ project, state })}
      />
    </>
  );
}
