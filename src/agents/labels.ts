/** The labels the built-in agents (./builtin) file and triage with; project setup creates them. */
import type { LabelSpec } from "../forge/client/index.ts";

export const AGENT_LABELS: LabelSpec[] = [
  { name: "prediction/unreviewed", color: "bfd4f2", description: "Filed by the predictor; not triaged yet" },
  {
    name: "prediction/backlog",
    color: "bfd4f2",
    description: "A prediction the planner accepted as later work",
  },
  // The gardener's flags for a maintainer: Conveyor's own `needs-human` and `underspecified` drive the lifecycle.
  {
    name: "gardener/needs-human",
    color: "d93f0b",
    description: "The gardener asks a maintainer to decide (a duplicate, a cycle)",
  },
  {
    name: "gardener/underspecified",
    color: "c5def5",
    description: "The gardener found no acceptance criteria",
  },
  // An action issue (docs/actions.md): operational work following a formula, without a pull request.
  { name: "action", color: "0052cc", description: "Operational work: follows a formula, no pull request" },
  {
    name: "vision",
    color: "d4c5f9",
    description: "A gap to the vision, filed by the planner: a maintainer promotes it",
  },
];
