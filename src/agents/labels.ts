/** The labels the built-in agents (./builtin) file and triage with; project setup creates them. */
import type { LabelSpec } from "../forge/client/index.ts";

export const AGENT_LABELS: LabelSpec[] = [
  { name: "prediction/unreviewed", color: "bfd4f2", description: "Filed by the predictor; not triaged yet" },
  {
    name: "prediction/backlog",
    color: "bfd4f2",
    description: "A prediction the planner accepted as later work",
  },
  { name: "action", color: "0052cc", description: "A prediction the planner accepted as work to do" },
  {
    name: "vision",
    color: "d4c5f9",
    description: "A gap to the vision, filed by the planner: a maintainer promotes it",
  },
];
