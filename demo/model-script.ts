/**
 * The stand-in model's script for the demo: the runner's Claude sessions (real tool calls that edit the
 * sample repository, run its tests, commit and write the phase file) and the critic's forced `report`.
 * Every decision is read from the request, so the script holds no state and survives resumed sessions.
 */
import { readFileSync } from "node:fs";
import { ACTION_SERVER } from "../runner/actions/action-tools.ts";
import type { CriticReport, Finding } from "../src/critic/report.ts";
import {
  bash,
  edit,
  type Rule,
  type ScriptRequest,
  type Turn,
  text,
  use,
  write,
} from "../test/support/model/script.ts";
import { AGENT_RULES } from "./agents-script.ts";

const phase = (line: string) => `printf '${line}\\n' > "$CONVEYOR_PHASE_FILE"`;
const commitAndWait = (message: string) =>
  bash(`git add -A && git commit -qm '${message}' && ${phase("PHASE:awaiting_ci")}`);
const runTests = bash("sh ./ci.sh", "Run the repository's tests");

// --- #1 slugify: the critic finds the issue's own example failing ----------------------------------------

export const SLUGIFY_V1 = `/** Turns text into a URL slug: lowercase, every run of other characters one dash. */
export function slugify(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-");
}
`;

export const SLUGIFY_FIX = `  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");`;

export const SLUGIFY_TEST = `import assert from "node:assert/strict";
import { test } from "node:test";
import { slugify } from "../src/slugify.js";

test("lowercases and joins words with dashes", () => {
  assert.equal(slugify("Hello World"), "hello-world");
});
`;

export const SLUGIFY_TEST_ENDS = `
test("drops dashes at either end", () => {
  assert.equal(slugify("Hello, World!"), "hello-world");
  assert.equal(slugify("  -- Tips & Tricks --  "), "tips-tricks");
});
`;

// --- #2 slugPath -------------------------------------------------------------------------------------------

const SLUG_PATH = `import { slugify } from "./slugify.js";

/** Slugifies each part of a path and joins them with slashes, leaving out parts that slugify to nothing. */
export function slugPath(parts) {
  return parts.map(slugify).filter(Boolean).join("/");
}
`;

const SLUG_PATH_TEST = `import assert from "node:assert/strict";
import { test } from "node:test";
import { slugPath } from "../src/slug-path.js";

test("slugifies each part and joins them with slashes", () => {
  assert.equal(slugPath(["Blog", "Hello, World!"]), "blog/hello-world");
});

test("leaves out parts that slugify to nothing", () => {
  assert.equal(slugPath(["Docs", "!!", "Setup"]), "docs/setup");
});
`;

/** What the maintainer's review of #2 asks for. */
const SLUG_PATH_TEST_ONE = `
test("takes a single string as one part", () => {
  assert.equal(slugPath("Blog"), "blog");
});
`;

// --- #3 clamp: min and max swapped, pushed without running the tests --------------------------------------

export const CLAMP_BUG = "  return Math.max(max, Math.min(min, n));";
export const CLAMP_FIX = "  return Math.min(max, Math.max(min, n));";

export const CLAMP = `/** Limits n to the range from min to max. */
export function clamp(n, min, max) {
${CLAMP_BUG}
}
`;

export const CLAMP_TEST = `import assert from "node:assert/strict";
import { test } from "node:test";
import { clamp } from "../src/clamp.js";

test("keeps numbers inside the range", () => {
  assert.equal(clamp(5, 0, 10), 5);
});

test("moves numbers outside the range to its nearest end", () => {
  assert.equal(clamp(-3, 0, 10), 0);
  assert.equal(clamp(12, 0, 10), 10);
});
`;

/** The CI log's address from the failure excerpt Conveyor passes on (`… (http://…/ci/logs/7)`). */
const ciLogOf = (req: ScriptRequest) => /\((https?:\/\/\S+\/ci\/logs\/\d+)\)/.exec(req.lastUserText)?.[1];

// --- #4 formatBytes: the units are a maintainer's call ----------------------------------------------------

export const ASK =
  "Decimal (1 kB = 1000 B) or binary (1 KiB = 1024 B) units? The issue leaves it to a maintainer.";

export const FORMAT_BYTES = `const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** A byte count for humans in binary units (1 KiB = 1024 B), with one decimal above bytes. */
export function formatBytes(n) {
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? \`\${value} B\` : \`\${value.toFixed(1)} \${UNITS[unit]}\`;
}
`;

export const FORMAT_BYTES_TEST = `import assert from "node:assert/strict";
import { test } from "node:test";
import { formatBytes } from "../src/format-bytes.js";

test("keeps small counts in bytes", () => {
  assert.equal(formatBytes(512), "512 B");
});

test("uses binary units with one decimal", () => {
  assert.equal(formatBytes(1536), "1.5 KiB");
  assert.equal(formatBytes(5 * 1024 ** 3), "5.0 GiB");
});
`;

// --- #5 CI names every test: a change to CI's own script waits for a maintainer ------------------------------

const CI_SCRIPT = `#!/bin/sh
# What CI runs on every pull request: all tests, each named in the log, nothing to install.
set -e
node --test --test-reporter=spec
`;

const SAMPLE_README = readFileSync(new URL("./sample-repo/README.md", import.meta.url), "utf8");
/** The README's line about CI, as #5 and #6 each change it (the same line: their pull requests conflict). */
const README_CI =
  "`sh ci.sh` runs every test with `node --test` (no dependencies to install); CI runs the same script on each";
const README_CI_NAMED =
  "`sh ci.sh` runs every test with `node --test --test-reporter=spec`, naming each one (no dependencies to install); CI runs the same script on each";
const README_ONE_FILE =
  "`sh ci.sh` runs every test with `node --test` (no dependencies to install; `node --test test/<name>.test.js` runs one file); CI runs the same script on each";
const README_BOTH =
  "`sh ci.sh` runs every test with `node --test --test-reporter=spec`, naming each one (no dependencies to install; `node --test test/<name>.test.js` runs one file); CI runs the same script on each";

// --- the planner's gap: truncate --------------------------------------------------------------------------

const TRUNCATE = `/** Cuts text longer than max characters to its first max - 1 and an ellipsis. */
export function truncate(text, max) {
  return text.length <= max ? text : \`\${text.slice(0, max - 1)}…\`;
}
`;

const TRUNCATE_TEST = `import assert from "node:assert/strict";
import { test } from "node:test";
import { truncate } from "../src/truncate.js";

test("cuts long text to max characters, the last an ellipsis", () => {
  assert.equal(truncate("Hello, World!", 6), "Hello…");
});

test("keeps text that fits", () => {
  assert.equal(truncate("Hello", 5), "Hello");
});
`;

// --- #7 the action: announce this week's changes ------------------------------------------------------------

const action = (name: string) => `mcp__${ACTION_SERVER}__${name}`;
const actionPhase = (lines: string) => bash(`printf '${lines}' > "$CONVEYOR_PHASE_FILE"`, "Write the phase");
/** A progress note quoting what the last step's run answered. */
const reportStep = (step: string) => (req: ScriptRequest) =>
  use(action("progress"), { text: `${step}: ${req.toolResults.at(-1)?.text ?? "(nothing)"}` });

// --- the critic ---------------------------------------------------------------------------------------------

const report = (verdict: CriticReport["verdict"], summary: string, findings: Finding[] = []): Turn =>
  use("report", { verdict, summary, findings } satisfies CriticReport);

const diffOf = (req: ScriptRequest) => /<diff>\n([\s\S]*)\n<\/diff>/.exec(req.lastUserText)?.[1] ?? "";

/** Approves once slugify trims dashes at both ends: the issue's own example needs it. */
function reviewSlugify(req: ScriptRequest): Turn {
  if (diffOf(req).includes('.replace(/^-+|-+$/g, "")')) {
    return report("APPROVE", "slugify now matches the issue's example, and a test pins it down.");
  }
  return report("REQUEST_CHANGES", "slugify leaves a dash at the end of the issue's own example.", [
    {
      severity: "major",
      file: "src/slugify.js",
      line: 3,
      comment:
        'slugify("Hello, World!") returns "hello-world-", not "hello-world": drop dashes at either end and test the example.',
      inScope: true,
    },
  ]);
}

// --- the script ---------------------------------------------------------------------------------------------

/** Sessions are told `Implement issue #N of …` first and `Conveyor continues issue #N.` on every continuation. */
const implement = (n: number) => new RegExp(`^Implement issue #${n} of `, "m");
const continues = (n: number) => new RegExp(`^Conveyor continues issue #${n}\\. `, "m");

export const DEMO_SCRIPT: Rule[] = [
  {
    when: implement(1),
    steps: [
      write("src/slugify.js", SLUGIFY_V1),
      write("test/slugify.test.js", SLUGIFY_TEST),
      runTests,
      // A session that claims more than its issue: Conveyor collects the commit as "refs #2", so merging #1
      // does not close #2 (which still needs its own work).
      commitAndWait("Add slugify (#1); fixes #2 too, slugPath only needs it"),
      text("slugify is in src/slugify.js with its test; the tests pass and the change is committed."),
    ],
  },
  {
    when: continues(1),
    steps: [
      edit("src/slugify.js", '  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-");', SLUGIFY_FIX),
      edit("test/slugify.test.js", SLUGIFY_TEST, SLUGIFY_TEST + SLUGIFY_TEST_ENDS),
      runTests,
      commitAndWait("slugify: drop dashes at either end (#1)"),
      text("slugify drops dashes at either end now, and the issue's example is a test."),
    ],
  },
  {
    when: implement(2),
    steps: [
      bash("cat src/slugify.js", "Read the slugify it builds on"),
      write("src/slug-path.js", SLUG_PATH),
      write("test/slug-path.test.js", SLUG_PATH_TEST),
      runTests,
      commitAndWait("Add slugPath (#2)"),
      text("slugPath is in src/slug-path.js, built on slugify; the tests pass."),
    ],
  },
  {
    // The maintainer's review: their words and the line they point at reach the same session.
    when: new RegExp(
      `${continues(2).source}[\\s\\S]*maintainer requested changes[\\s\\S]*On \`src/slug-path\\.js\` line 5`,
      "m",
    ),
    steps: [
      edit("src/slug-path.js", "  return parts.map(slugify)", "  return [].concat(parts).map(slugify)"),
      edit("test/slug-path.test.js", SLUG_PATH_TEST, SLUG_PATH_TEST + SLUG_PATH_TEST_ONE),
      runTests,
      commitAndWait("slugPath: take a single string too (#2)"),
      text("slugPath takes a single string now, as the maintainer asked, with a test."),
    ],
  },
  {
    when: implement(3),
    steps: [
      write("src/clamp.js", CLAMP),
      write("test/clamp.test.js", CLAMP_TEST),
      commitAndWait("Add clamp (#3)"),
      text("clamp is in src/clamp.js with tests; committed, CI will run them."),
    ],
  },
  {
    when: continues(3),
    steps: [
      (req) => {
        const log = ciLogOf(req);
        return log ? bash(`curl -s ${log} | tail -n 40`, "Read the CI log") : runTests;
      },
      edit("src/clamp.js", CLAMP_BUG, CLAMP_FIX),
      runTests,
      commitAndWait("clamp: min and max were swapped (#3)"),
      text("Fixed: clamp had min and max swapped. The tests pass now."),
    ],
  },
  {
    when: implement(4),
    steps: [
      bash("cat README.md && ls src test", "Look around the repository"),
      bash(`printf 'PHASE:escalate\\nReason: %s\\n' '${ASK}' > "$CONVEYOR_PHASE_FILE"`, "Ask a maintainer"),
      text(`I need a decision before implementing this: ${ASK}`),
    ],
  },
  {
    when: continues(4),
    steps: [
      write("src/format-bytes.js", FORMAT_BYTES),
      write("test/format-bytes.test.js", FORMAT_BYTES_TEST),
      runTests,
      commitAndWait("Add formatBytes in binary units (#4)"),
      text("formatBytes uses binary units as the maintainer asked; the tests pass."),
    ],
  },
  {
    when: implement(5),
    steps: [
      bash("cat ci.sh", "Read CI's script"),
      write("ci.sh", CI_SCRIPT),
      edit("README.md", README_CI, README_CI_NAMED),
      runTests,
      commitAndWait("CI: name every test in the log (#5)"),
      text("ci.sh runs the tests with the spec reporter now, so the log names every test."),
    ],
  },
  {
    // The update job: #6 changed the same README line meanwhile. Both changes kept.
    when: continues(5),
    steps: [
      bash(`git merge --no-edit origin/main || git diff --name-only --diff-filter=U`, "Merge main in"),
      bash("cat README.md", "Read the conflict"),
      write("README.md", SAMPLE_README.replace(README_CI, README_BOTH)),
      runTests,
      commitAndWait("Merge main into conveyor/5: keep the spec reporter and the one-file hint (#5)"),
      text("Merged main: the README line now says both how tests are named and how to run one file."),
    ],
  },
  {
    when: implement(6),
    steps: [
      bash("cat README.md", "Read the README"),
      edit("README.md", README_CI, README_ONE_FILE),
      runTests,
      commitAndWait("README: how to run one test file (#6)"),
      text("The README's line about ci.sh now says how to run one file's tests."),
    ],
  },
  {
    when: /Title: Add truncate\(text, max\)/,
    steps: [
      write("src/truncate.js", TRUNCATE),
      write("test/truncate.test.js", TRUNCATE_TEST),
      runTests,
      commitAndWait("Add truncate, a gap the planner found"),
      text("truncate is in src/truncate.js with tests; they pass."),
    ],
  },
  {
    when: /follows the formula announce-changes/,
    steps: [
      use(action("progress"), { text: "Collecting the changes merged into main." }),
      use(action("run_step"), { id: "collect" }),
      reportStep("collect"),
      // Dangerous: refused until the vault approves it.
      use(action("run_step"), { id: "announce" }),
      actionPhase("PHASE:vault\\nStep: announce\\n"),
      text("The list is ready; posting it waits for the vault."),
    ],
  },
  {
    when: /The vault approved step announce/,
    steps: [
      use(action("run_step"), { id: "announce" }),
      reportStep("announce"),
      actionPhase("PHASE:done\\n"),
      text("Announced this week's merged changes to the team."),
    ],
  },
  // The vault's classifier leaves an announcement to a human (and the held merge of #5 too).
  {
    forced: "vault_verdict",
    steps: [
      use("vault_verdict", { verdict: "ask", reason: "It speaks for the team: a maintainer decides." }),
    ],
  },
  ...AGENT_RULES,
  { forced: "report", when: /<issue number="1"/, steps: [reviewSlugify] },
  {
    forced: "report",
    steps: [report("APPROVE", "Does what the issue asks, with tests that cover it.")],
  },
];
