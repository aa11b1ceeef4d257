/**
 * The stand-in's script for the chaos test: the demo's issues #1 (the critic asks for changes), #3 (CI red)
 * and #4 (escalates), with sessions that may be killed at any turn. A killed session is resumed (`Conveyor
 * continues … interrupted`), re-run by a revision's next attempt, or started fresh (`Continue work on …`)
 * when its transcript is gone, so every session converges on what its prompt asks from whatever the worktree
 * holds: it writes whole files (no Edit of a file that may not be there), commits only when something
 * changed, then writes the phase. The critic's reports are the demo's.
 */
import { AGENT_RULES } from "../../../../demo/agents-script.ts";
import {
  ASK,
  CLAMP,
  CLAMP_BUG,
  CLAMP_FIX,
  CLAMP_TEST,
  DEMO_SCRIPT,
  FORMAT_BYTES,
  FORMAT_BYTES_TEST,
  SLUGIFY_FIX,
  SLUGIFY_TEST,
  SLUGIFY_TEST_ENDS,
  SLUGIFY_V1,
} from "../../../../demo/model-script.ts";
import { ISSUES } from "../../../../demo/scenario.ts";
import { bash, type Rule, type ScriptRequest, text } from "../../../support/model/script.ts";

type Files = Record<string, string>;
/** What a session does, given what it was asked. */
type Work = { files: Files; message: string } | { escalate: string };

const phase = (line: string) => `printf '${line}\\n' > "$CONVEYOR_PHASE_FILE"`;

/** A revision's prompt, also when a fresh session recovers one: CI or the critic asked for changes. */
const asksForChanges = (req: ScriptRequest) => req.lastUserText.includes("asked for changes");

const REPLY = ISSUES.find((issue) => issue.number === 4)?.reply ?? "";

const WORK: Record<number, (req: ScriptRequest) => Work> = {
  1: (req) =>
    asksForChanges(req)
      ? {
          files: {
            "src/slugify.js": SLUGIFY_V1.replace(
              '  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-");',
              SLUGIFY_FIX,
            ),
            "test/slugify.test.js": SLUGIFY_TEST + SLUGIFY_TEST_ENDS,
          },
          message: "slugify: drop dashes at either end (#1)",
        }
      : {
          files: { "src/slugify.js": SLUGIFY_V1, "test/slugify.test.js": SLUGIFY_TEST },
          message: "Add slugify (#1)",
        },
  3: (req) =>
    asksForChanges(req)
      ? {
          files: { "src/clamp.js": CLAMP.replace(CLAMP_BUG, CLAMP_FIX), "test/clamp.test.js": CLAMP_TEST },
          message: "clamp: min and max were swapped (#3)",
        }
      : { files: { "src/clamp.js": CLAMP, "test/clamp.test.js": CLAMP_TEST }, message: "Add clamp (#3)" },
  // The reply is in the resuming prompt, or earlier in a resumed transcript.
  4: (req) =>
    JSON.stringify(req.messages).includes(REPLY)
      ? {
          files: { "src/format-bytes.js": FORMAT_BYTES, "test/format-bytes.test.js": FORMAT_BYTES_TEST },
          message: "Add formatBytes in binary units (#4)",
        }
      : { escalate: ASK },
};

/** Writes each file whole, through the shell (Write would want a file it has not seen read first). */
function writeFiles(files: Files): string {
  return Object.entries(files)
    .map(
      ([path, content]) =>
        `mkdir -p "$(dirname '${path}')" && cat > '${path}' <<'CHAOS_EOF'\n${content}CHAOS_EOF`,
    )
    .join("\n");
}

function sessionRule(number: number): Rule {
  const work = WORK[number];
  if (!work) throw new Error(`no chaos work for #${number}`);
  return {
    when: new RegExp(
      `^(Implement issue #${number} of |Continue work on issue #${number} of |Conveyor continues issue #${number}\\. )`,
      "m",
    ),
    steps: [
      (req) => {
        const w = work(req);
        return "escalate" in w
          ? bash("cat README.md && ls src test", "Look around the repository")
          : bash(writeFiles(w.files), "Write the change");
      },
      bash("sh ./ci.sh", "Run the repository's tests"),
      (req) => {
        const w = work(req);
        return "escalate" in w
          ? bash(`printf 'PHASE:escalate\\nReason: %s\\n' '${w.escalate}' > "$CONVEYOR_PHASE_FILE"`, "Ask")
          : bash(
              `git add -A && { git diff --cached --quiet || git commit -qm '${w.message}'; } && ${phase("PHASE:awaiting_ci")}`,
              "Commit and say so",
            );
      },
      text("Done."),
    ],
  };
}

/** The issues the chaos test labels. */
export const CHAOS_ISSUES = [1, 3, 4];

export const CHAOS_SCRIPT: Rule[] = [
  ...CHAOS_ISSUES.map(sessionRule),
  // The critic: the demo's reports.
  ...DEMO_SCRIPT.filter((rule) => rule.forced),
  // An escalation's triage answers at once, as in the demo: its maintainer waits for that answer.
  ...AGENT_RULES,
];
