/**
 * The stand-in's script for the factory's agents in the demo (model-script.ts holds the sessions' and the
 * critic's): the gardener's and the planner's manual runs ask for their designed outputs through the
 * safe-output tools, an escalation's triage proposes its step, and any run a built-in schedule starts gets a
 * noop.
 */
import { SAFE_OUTPUTS_SERVER } from "../runner/agents/safe-outputs.ts";
import { type Rule, type ScriptRequest, type Turn, text, use } from "../test/support/model/script.ts";
import { GROOMING, PLANNED, STALE_ISSUE } from "./scenario.ts";

const tool = (name: string) => `mcp__${SAFE_OUTPUTS_SERVER}__${name}`;

const groom: Turn[] = [STALE_ISSUE, ...GROOMING].flatMap(({ number, gardener }) =>
  gardener
    ? [
        use(tool("comment"), { issue: number, body: gardener.comment }),
        use(tool("add_labels"), { issue: number, labels: [gardener.label] }),
      ]
    : [],
);

/** The escalated issue's number, as the triage's prompt gives it (in its `<escalation>` block). */
export function escalatedIssue(req: ScriptRequest): number {
  const found = /"issue":\{"number":(\d+)/.exec(`${req.system}\n${req.lastUserText}`);
  if (!found) throw new Error("no escalated issue in the triage's prompt");
  return Number(found[1]);
}

/** #4's session asks about units: the triage sees a question only the issue's author can settle. */
export const TRIAGE_OF_4 = {
  diagnosis:
    "The session stopped before writing code: the issue leaves the units (decimal kB or binary KiB) to a maintainer, and nothing in the repository settles it.",
  question: "Should formatBytes use decimal units (1 kB = 1000 B) or binary units (1 KiB = 1024 B)?",
};

export const AGENT_RULES: Rule[] = [
  // The built-in agents' schedules (the predictor every hour, the gardener daily, the planner weekly) start
  // runs of their own when a demo crosses their time: the sample has nothing more for them, so they say so.
  {
    when: /\nTrigger: schedule /,
    steps: [
      use(tool("noop"), { reason: "The demo's sample has nothing more for a scheduled run." }),
      text("Nothing to do on this schedule."),
    ],
  },
  {
    when: /You triage one escalation/,
    steps: [
      (req) =>
        use(tool("propose_step"), {
          issue: escalatedIssue(req),
          diagnosis: TRIAGE_OF_4.diagnosis,
          step: { kind: "clarify", question: TRIAGE_OF_4.question },
        }),
      text("Proposed asking the issue's author."),
    ],
  },
  {
    when: /You are the gardener/,
    steps: [
      ...groom,
      text(
        "Groomed: one issue stale for months, one duplicate for a maintainer to close, one issue without acceptance criteria.",
      ),
    ],
  },
  {
    when: /You are the planner/,
    steps: [
      use("Glob", { pattern: "src/*.js" }),
      use(tool("create_issue"), { title: PLANNED.title, body: PLANNED.body }),
      text(`Filed the largest gap: ${PLANNED.title}.`),
    ],
  },
];
