/** The vault's pending items across projects, each with the operator's approve and reject forms. */
import type { VaultItemView } from "../../vault/queries.ts";
import { formatTime } from "../format.ts";

const requesterText = (item: VaultItemView) =>
  item.requester.type === "issue"
    ? `${item.project}#${item.requester.issue}${item.requester.step ? ` (${item.requester.step})` : ""}`
    : `${item.project}: agent run ${item.requester.runId}`;

export function VaultSection(props: { items: VaultItemView[]; csrf: string }) {
  return (
    <section>
      <h2>
        Vault: dangerous actions waiting for a decision <span class="count">{props.items.length}</span>
      </h2>
      {props.items.length === 0 && <p class="quiet">Nothing waiting.</p>}
      <ol class="list">
        {props.items.map((item) => (
          <li class="approval vault-item">
            <div>
              <strong>
                {item.id} {item.title}
              </strong>
              <div class="quiet">
                {item.kind.replace(/_/g, " ")} · {requesterText(item)} · expires {formatTime(item.expiresAt)}
              </div>
              {item.verdict && (
                <div class="quiet">
                  classifier: {item.verdict.verdict} ({item.verdict.reason})
                </div>
              )}
            </div>
            <form
              method="post"
              action={`/dashboard/projects/${item.project}/vault/${item.id}`}
              class="actions"
            >
              <input type="hidden" name="csrf" value={props.csrf} />
              <input type="text" name="reason" placeholder="reason (for a rejection)" maxlength={500} />
              <button type="submit" name="decision" value="approve" class="action-approve">
                Approve
              </button>
              <button type="submit" name="decision" value="reject" class="action-reject">
                Reject
              </button>
            </form>
          </li>
        ))}
      </ol>
    </section>
  );
}
