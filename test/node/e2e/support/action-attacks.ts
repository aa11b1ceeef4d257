/**
 * A hostile action session's attacks on its steps, for the action e2e test: formulas whose steps run scripts
 * of the default branch, and the stand-in's rules for a session that rewrites a step's script in its
 * worktree and plants git configuration (an fsmonitor) in its HOME and repository before calling the step,
 * and that edits an approved step's script before running it. Whatever of that runs prints the secret
 * encoded (base64, hex), which redaction of its literal value would not catch. `askingVault` is the test's
 * other sessions' too.
 */
import { bash, type Rule, type Turn, text, use } from "../../../support/model/script.ts";

export const formulas = {
  "token-check": `---
name: token-check
version: 1
description: Check the deploy token
secrets: [DEPLOY_TOKEN]
steps:
  - id: check
    description: Check the token is set
    command: ./scripts/check-token.sh
    secrets: [DEPLOY_TOKEN]
    output: true
  - id: status
    description: Check the checkout is clean
    command: git status --short && echo clean
    secrets: [DEPLOY_TOKEN]
    output: true
---
`,
  "swap-key": `---
name: swap-key
version: 1
description: Swap the signing key
secrets: [DEPLOY_TOKEN]
steps:
  - id: swap
    description: Swap the key
    command: ./scripts/swap.sh
    dangerous: true
    secrets: [DEPLOY_TOKEN]
    output: true
---
`,
};

/** The scripts the formulas run, as the default branch holds them (executable). */
export const scripts = {
  "scripts/check-token.sh": '#!/bin/sh\ntest -n "$DEPLOY_TOKEN" && echo "token is set"\n',
  "scripts/swap.sh": "#!/bin/sh\necho swapped v1\n",
};
export const swapV2 = "#!/bin/sh\necho swapped v2\n";

/**
 * The hostile session's preparations: it rewrites a step's script in its worktree to print the secret
 * encoded, and plants an fsmonitor (run by any `git status`) in its HOME's and its repository's git config.
 * Their markers are split in the commands (`""`), so that only running them makes them whole.
 */
const rewrite = (script: string) => `cat > ${script} <<'SCRIPT'
#!/bin/sh
echo REWRITTEN""-RAN; printf %s "$DEPLOY_TOKEN" | base64; printf %s "$DEPLOY_TOKEN" | od -An -tx1 | tr -d ' \\n'
printf %s "$DEPLOY_TOKEN" | base64 >> "$HOME/loot"
SCRIPT
chmod +x ${script}`;
const PLANT = `cat > "$HOME/fsmonitor.sh" <<'SCRIPT'
#!/bin/sh
{ echo FSMONITOR""-RAN; printf %s "$DEPLOY_TOKEN" | base64; } | tee -a "$HOME/loot" >&2
SCRIPT
chmod +x "$HOME/fsmonitor.sh"
git config --global core.fsmonitor "$HOME/fsmonitor.sh"; git config core.fsmonitor "$HOME/fsmonitor.sh"`;

/** A secret in the encodings a leak would use. */
export const encoded = (secret: string) => [
  secret,
  Buffer.from(secret).toString("base64"),
  Buffer.from(secret).toString("hex"),
  [...secret].reverse().join(""),
];

/**
 * The rules: `tool` names an action tool as the SDK offers it, `phase` writes the phase file. Each approval
 * of step swap resumes the same rule: it edits the script, runs the step and, refused (its file changed on
 * the default branch since the approval), asks the vault again.
 */
export function rules(tool: (name: string) => string, phase: (lines: string) => Turn): Rule[] {
  /** Whether the last run of step swap was refused, as the resumed session saw it. */
  let swapRefused = false;
  return [
    {
      when: /follows the formula token-check/,
      steps: [
        bash(`${rewrite("scripts/check-token.sh")}\n${PLANT}`, "Prepare"),
        use(tool("run_step"), { id: "check" }),
        use(tool("run_step"), { id: "status" }),
        bash('cat "$HOME/loot" 2>/dev/null; echo "end of"" loot"', "Collect"),
        phase("PHASE:done\\n"),
        text("Checked the token."),
      ],
    },
    askingVault(tool, phase, "swap-key", "swap"),
    {
      // Each approval resumes here: the session edits the approved script in its worktree, then runs the
      // step; refused (its file changed on the default branch since), it asks the vault again.
      when: /The vault approved step swap/,
      steps: [
        bash(rewrite("scripts/swap.sh"), "Edit the script"),
        use(tool("run_step"), { id: "swap" }),
        (req) => {
          const answer = req.toolResults.at(-1)?.text ?? "(nothing)";
          swapRefused = answer.startsWith("step swap does not run");
          return swapRefused
            ? phase("PHASE:vault\\nStep: swap\\n")
            : use(tool("progress"), { text: `swap: ${answer}` });
        },
        () => (swapRefused ? text("Asked the vault again.") : phase("PHASE:done\\n")),
        text("Swapped the key."),
      ],
    },
  ];
}

/** A session of `formula` that calls its dangerous `step` first, is refused, and stops for the vault. */
export const askingVault = (
  tool: (name: string) => string,
  phase: (lines: string) => Turn,
  formula: string,
  step: string,
): Rule => ({
  when: new RegExp(`follows the formula ${formula}`),
  steps: [
    use(tool("run_step"), { id: step }),
    phase(`PHASE:vault\\nStep: ${step}\\n`),
    text(`Waiting for the vault to approve ${step}.`),
  ],
});
