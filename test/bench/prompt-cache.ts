/**
 * What a later round of the same issue costs against its first: the runner's real driver (Claude Code through
 * the Agent SDK, in bubblewrap, behind the model proxy) against the Messages-API stand-in, which caches prompts
 * as the API documents it. Per case, on a stand-in of its own whose common prefix (Claude Code's tools and
 * system prompt) a first session has warmed, as a busy fleet's is: an issue's implementation (iteration 1),
 * then its CI-red round (iteration 2, resumed with the CI's failure) and a critic's round (iteration 3). USD are
 * the runner's meter's, at list prices. Cases: the next round at once; after the 5-minute cache expired (CI
 * that took 6 minutes); the same with the 1-hour cache the project's `promptCache` setting picks for such CI.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { ClaudeDriver } from "../../runner/drivers/claude.ts";
import { runJob } from "../../runner/job.ts";
import type { PromptCacheTtl } from "../../src/domain/prompt-cache.ts";
import type { Job, Usage } from "../../src/runner-api/contract.ts";
import { tempDir, Upstream } from "../node/git/support.ts";
import { jobContext, makeJob, testSandbox } from "../node/runner/support/context.ts";
import { FakeWorker } from "../node/runner/support/fake-worker.ts";
import { bash, edit, type Rule, text, write } from "../support/model/script.ts";
import { startModelStandIn } from "../support/model/server.ts";
import { emit } from "./load.ts";

const SET_PHASE = 'printf "PHASE:awaiting_ci\\n" > "$CONVEYOR_PHASE_FILE"';
const commit = (message: string) => bash(`git add -A && git commit -qm "${message}" && ${SET_PHASE}`);

/** A module and its test, of the size a small issue's change has (a few KB). */
const MODULE = Array.from(
  { length: 60 },
  (_, i) => `export function step${i}(input) {\n  // Step ${i} of the pipeline.\n  return input + ${i};\n}\n`,
).join("\n");
const TEST = Array.from({ length: 40 }, (_, i) => `assert.equal(step${i}(1), ${i + 1}, "step ${i}");`).join(
  "\n",
);
const CI_LOG = `CI failed: check "test" on the branch's head.\n${Array.from(
  { length: 40 },
  (_, i) =>
    `not ok ${i + 1} - step${i} returns input + ${i}\n  ---\n  expected: ${i + 1}\n  actual: ${i}\n  ...`,
).join("\n")}`;

const SCRIPT: Rule[] = [
  {
    when: /CI failed/,
    steps: [
      edit("src/steps.js", "return input + 0;", "return input + 0 + 0;"),
      commit("Fix step 0"),
      text("Fixed."),
    ],
  },
  {
    when: /Critic findings/,
    steps: [
      edit("src/steps.js", "// Step 1 of", "// The first step after the start of"),
      commit("Document"),
      text("Done."),
    ],
  },
  {
    when: /Implement issue #\d+ /,
    steps: [
      write("src/steps.js", MODULE),
      write("test/steps.test.js", `import assert from "node:assert";\n${TEST}\n`),
      bash("ls -R src test | head -20"),
      commit("Add the pipeline's steps"),
      text("Done: the steps and their test."),
    ],
  },
];

type Case = { name: string; ttl: PromptCacheTtl; ciMs: number };
const CASES: Case[] = [
  { name: "at_once", ttl: "5m", ciMs: 0 },
  { name: "after_5m_cache", ttl: "5m", ciMs: 6 * 60_000 },
  { name: "after_5m_with_1h_cache", ttl: "1h", ciMs: 6 * 60_000 },
];

export async function benchPromptCache(): Promise<void> {
  const results: Record<string, number[]> = {};
  for (const c of CASES) results[c.name] = await rounds(c);
  const [at1, at2, at3] = results.at_once as number[];
  const [late1, late2] = results.after_5m_cache as number[];
  const [long1, long2] = results.after_5m_with_1h_cache as number[];
  const ratio = (a = 0, b = 1) => a / b;
  emit({ name: "iteration2_cost_ratio", value: ratio(at2, at1), unit: "ratio", target: "<= 0.3" });
  emit({ name: "critic_round_cost_ratio", value: ratio(at3, at1), unit: "ratio", target: "<= 0.3" });
  emit({ name: "iteration2_cost_ratio_after_cache_expiry", value: ratio(late2, late1), unit: "ratio" });
  emit({ name: "iteration2_cost_ratio_after_5m_with_1h_cache", value: ratio(long2, long1), unit: "ratio" });
  // What the two rounds cost together with the hour against without it, when CI takes 6 minutes.
  emit({
    name: "two_rounds_usd_1h_over_5m_slow_ci",
    value: ratio((long1 ?? 0) + (long2 ?? 0), (late1 ?? 0) + (late2 ?? 0)),
    unit: "ratio",
    target: "< 1",
  });
  console.error(`prompt cache: USD per round ${JSON.stringify(results)}`);
}

/** The case's three rounds of one issue; USD each. */
async function rounds({ ttl, ciMs }: Case): Promise<number[]> {
  const root = await tempDir("bench-prompt-cache");
  let offset = 0;
  const upstream = await Upstream.create(root);
  const worker = await FakeWorker.start();
  const standIn = await startModelStandIn({ script: SCRIPT, now: () => Date.now() + offset });
  try {
    const ctx = jobContext({
      workDir: join(root, "work"),
      workerUrl: worker.url,
      token: worker.issueToken(),
      driver: () =>
        new ClaudeDriver({ sandbox: testSandbox({ baseUrl: standIn.url, apiKey: "sk-ant-bench" }) }),
    });
    const run = async (job: Partial<Job> & { id: string }): Promise<{ usd: number; sessionId: string }> => {
      worker.enqueue(makeJob({ cloneUrl: `file://${upstream.path}`, promptCacheTtl: ttl, ...job }));
      const claimed = await ctx.api.claim({ waitMs: 0, holding: [] });
      if (!claimed) throw new Error("nothing to claim");
      await runJob(ctx, claimed, new AbortController().signal);
      const outcome = worker.outcome(job.id);
      if (outcome?.kind !== "complete") throw new Error(`job ${job.id}: ${JSON.stringify(outcome)}`);
      const usages = (worker.events.get(job.id) ?? []).flatMap((e) => (e.kind === "usage" ? [e.usage] : []));
      const usage = usages.at(-1) as Usage | undefined;
      return { usd: usage?.usd ?? 0, sessionId: outcome.body.sessionId ?? "" };
    };
    // Another issue's session first: the tools and system prompt are in the cache, as on a busy fleet.
    await run({ id: "warm", issue: { number: 1, title: "Warm up", body: "Add the steps." } });
    const issue = {
      number: 2,
      title: "Add the pipeline's steps",
      body: "Sixty steps, each adding its index.",
    };
    const first = await run({ id: "implement", issue });
    offset += ciMs;
    const ci = await run({
      id: "ci-red",
      kind: "revise",
      issue,
      iteration: 2,
      sessionId: first.sessionId,
      instructions: CI_LOG,
    });
    const critic = await run({
      id: "critic",
      kind: "revise",
      issue,
      iteration: 3,
      sessionId: first.sessionId,
      instructions: "Critic findings: step 1's comment does not say what it does.",
    });
    return [first.usd, ci.usd, critic.usd];
  } finally {
    await Promise.all([worker.close(), standIn.close()]);
    await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchPromptCache();
