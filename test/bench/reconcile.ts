/**
 * Reconciliation's figures come from Worker-side benchmarks (workerd via the vitest plugin, the local forge
 * counting every request): the quiet cycle's and a change's forge calls (test/worker/reconcile-cost.test.ts)
 * and 100 projects reconciled at once with the cron's subrequests (test/worker/bench/). Their JSON lines are
 * passed through as they are.
 */
import { spawn } from "node:child_process";

const FILES = [
  "test/worker/reconcile-cost.test.ts",
  "test/worker/bench/reconcile-scale.bench-test.ts",
  // GitHub's secondary limits kept under 10 000 deliveries (two minutes).
  "test/worker/bench/forge-pacing.bench-test.ts",
];

export async function benchReconciliation(): Promise<void> {
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn("npx", ["vitest", "run", "--project", "worker", ...FILES], {
      env: { ...process.env, CONVEYOR_BENCH: "1", WRANGLER_SEND_METRICS: "false" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let text = "";
    child.stdout.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(text) : reject(new Error(`reconciliation benchmarks failed (${code})`)),
    );
  });
  // vitest prefixes a test's console output with its own (coloured) header on the same line.
  for (const line of output.split("\n")) {
    const at = line.indexOf('{"name"');
    if (at >= 0) console.log(line.slice(at).trim());
  }
}
