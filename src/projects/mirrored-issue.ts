/**
 * What Conveyor's mirror (./mirror.ts, D1's `forge_issues`) keeps of a forge issue or pull request: a type of
 * its own, free of the Worker's bindings, so that pure modules (src/agents/backlog.ts) can name it.
 */
export type MirroredIssue = {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  labels: string[];
  dependsOn: number[];
  /** Absent: an issue (a webhook's issue event), or a row written before the mirror knew. */
  kind?: "issue" | "pull";
  /** A pull request's linked issues: those its text closes by keyword. */
  closes?: number[];
  author?: string;
  /** Absent where the source does not say (a single issue's read): the mirror keeps what it has. */
  comments?: number;
  /** The forge's times, epoch ms; absent or null where the source does not say: the mirror keeps what it has. */
  createdAt?: number | null;
  forgeUpdatedAt?: number | null;
  closedAt?: number | null;
};
