import { issuePath, StateBadge, When } from "../layout.tsx";
import type { IssueCard } from "../queries.ts";

const REASON_CHARS = 140;

/** One issue in a list: number and title, state, iteration, when it last moved, and why it stopped. */
export function IssueCardView(props: {
  issue: IssueCard;
  now: number;
  showState?: boolean;
  showProject?: boolean;
}) {
  const { issue, now } = props;
  const reason =
    issue.reason && issue.reason.length > REASON_CHARS
      ? `${issue.reason.slice(0, REASON_CHARS)}…`
      : issue.reason;
  return (
    <div class="card">
      <a href={issuePath(issue.projectId, issue.number)}>
        {props.showProject ? `${issue.projectId}#${issue.number}` : `#${issue.number}`} {issue.title ?? ""}
      </a>
      <div class="meta">
        {props.showState && <StateBadge state={issue.state} />}
        {issue.iteration > 0 && <span>iteration {issue.iteration}</span>}
        {issue.prNumber !== null && <span>PR #{issue.prNumber}</span>}
        <When at={issue.updatedAt} now={now} />
      </div>
      {reason && <p class="reason">{reason}</p>}
    </div>
  );
}
