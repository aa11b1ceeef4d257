import type { VaultItemView } from "../../vault/queries.ts";
import { ActionButtons } from "../actions.tsx";
import type { IssueCard } from "../queries.ts";
import { IssueCardView } from "./issue-card.tsx";
import { VaultSection } from "./vault.tsx";

const SECTIONS = [
  { state: "awaiting_approval", title: "Merges waiting for approval (protected paths, change requests)" },
  { state: "escalated", title: "Escalated to a human" },
] as const;

/** What waits for a human, oldest first, with the buttons that answer it: the vault's items first. */
export function Approvals(props: {
  vault: VaultItemView[];
  issues: IssueCard[];
  total: number;
  shown: number;
  csrf: string;
  now: number;
}) {
  return (
    <>
      <VaultSection items={props.vault} csrf={props.csrf} now={props.now} />
      {props.total > props.shown && (
        <p>
          Showing the {props.shown} oldest of {props.total}.
        </p>
      )}
      {SECTIONS.map((section) => {
        const items = props.issues.filter((issue) => issue.state === section.state);
        return (
          <section>
            <h2>
              {section.title} <span class="count">{items.length}</span>
            </h2>
            {items.length === 0 && <p class="quiet">Nothing waiting.</p>}
            <ol class="list">
              {items.map((issue) => (
                <li class="approval">
                  <IssueCardView issue={issue} now={props.now} showProject />
                  <ActionButtons
                    project={issue.projectId}
                    number={issue.number}
                    state={issue.state}
                    csrf={props.csrf}
                    next="/dashboard/approvals"
                  />
                </li>
              ))}
            </ol>
          </section>
        );
      })}
    </>
  );
}
