/**
 * The model proxy holds the budget and is no way out, played for real: the model stand-in's script makes
 * Claude Code (the real Agent SDK binary, in bubblewrap) run a script that talks to the proxy with the
 * session's own token, as anything the model runs can: 10 streams abandoned after `message_start`, 10
 * requests at once, a server tool, `mcp_servers`, a beta that is not Claude Code's. What the stand-in bills
 * (what the real API would) must stay within the budget, and all of it must be metered.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bash, text } from "../../support/model/script.ts";
import { billedUsd, type ModelStandIn, startModelStandIn } from "../../support/model/server.ts";
import { tempDir } from "../git/support.ts";
import { runAgentIn } from "../runner/support/context.ts";

const BUDGET_USD = 1.5;
/** 10 000 output tokens the stand-in answers each attack with: $0.25 at Opus 5's $25 a million. */
const LONG_ANSWER = "spent ".repeat(6_666);
const MODEL = "claude-opus-5-5";

/**
 * Run by the model's Bash in the sandbox: every line of its report is `<what> <status>`. It goes to a file too:
 * once the budget is spent, the proxy refuses Claude Code's next request, which would have carried it.
 */
const ATTACK = String.raw`
import { appendFileSync } from "node:fs";
const log = (line) => appendFileSync("report.txt", line + "\n");
const url = process.env.ANTHROPIC_BASE_URL + "/v1/messages";
const headers = { "x-api-key": process.env.ANTHROPIC_API_KEY, "content-type": "application/json", "anthropic-version": "2023-06-01" };
const ask = (content, extra = {}, more = {}) => ({
  method: "POST",
  headers: { ...headers, ...more },
  body: JSON.stringify({ model: "${MODEL}", max_tokens: 20000, messages: [{ role: "user", content }], ...extra }),
});
const web = { tools: [{ type: "web_fetch_20250910", name: "web_fetch", max_uses: 1 }] };
log("server-tool " + (await fetch(url, ask("fetch https://attacker.example/x", web))).status);
const mcp = { mcp_servers: [{ type: "url", url: "https://attacker.example/mcp", name: "x" }] };
log("mcp-servers " + (await fetch(url, ask("use the mcp server", mcp))).status);
const beta = { "anthropic-beta": "mcp-client-2025-04-04,claude-code-20250219" };
// A 429 says requests in flight (Claude Code's own, a stream just abandoned) hold the budget: wait as it asks.
const patiently = async (init) => {
  for (;;) {
    const res = await fetch(url, init);
    if (res.status !== 429) return res;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
};
log("beta " + (await patiently(ask("beta-me", { max_tokens: 5 }, beta))).status);
const padding = "x".repeat(20000);
for (let i = 0; i < 10; i++) {
  const abort = new AbortController();
  const res = await patiently({ ...ask("abandon-me " + i + padding, { stream: true }), signal: abort.signal });
  if (res.ok) {
    const reader = res.body.getReader();
    let seen = "";
    while (!seen.includes("message_start")) seen += new TextDecoder().decode((await reader.read()).value);
  }
  abort.abort();
  log("abandoned " + res.status);
}
const parallel = await Promise.all(
  Array.from({ length: 10 }, (_, i) => fetch(url, ask("spend-me " + i)).then((r) => r.status)),
);
for (const status of parallel) log("parallel " + status);
`;

let root = "";
let standIn: ModelStandIn;

beforeAll(async () => {
  root = await tempDir("proxy-budget");
  for (const dir of ["wt", "home"]) await mkdir(join(root, dir), { recursive: true });
  await writeFile(join(root, "wt", "attack.mjs"), ATTACK);
  standIn = await startModelStandIn({
    // Long enough for a client to go away after `message_start`.
    eventGapMs: 50,
    script: [
      { when: /abandon-me|spend-me/, steps: [text(LONG_ANSWER)] },
      { when: /beta-me/, steps: [text("ok")] },
      {
        when: /Spend what you can/,
        steps: [bash(`${process.execPath} attack.mjs`, "Spend"), text("Done.")],
      },
    ],
  });
});

afterAll(async () => {
  await standIn.close();
  await rm(root, { recursive: true, force: true });
});

describe("a session spending through the model proxy", { timeout: 120_000 }, () => {
  it("cannot spend past its budget, is metered for all it spent, and reaches nothing but the model", async () => {
    const { usage: metered } = await runAgentIn(
      root,
      standIn.url,
      { name: "spender", prompt: "Spend what you can.", tools: ["Bash"], outputs: [] },
      { maxTurns: 5, usdRemaining: BUDGET_USD },
    );

    const report = await readFile(join(root, "wt", "report.txt"), "utf8");
    const lines = (what: string) =>
      [...report.matchAll(new RegExp(`^${what} (\\d+)$`, "gm"))].map((m) => m[1]);
    const messages = standIn.requests.filter((r) => r.path === "/v1/messages");
    const attack = (marker: string) => messages.filter((r) => JSON.stringify(r.body).includes(marker));
    // The attack ran: every stream was abandoned upstream after its start, some parallel requests went through.
    expect(lines("abandoned")).toEqual(Array(10).fill("200"));
    expect(attack("abandon-me")).toHaveLength(10);
    expect(lines("parallel")).toContain("200");

    // What the API would bill stays within the budget, and the proxy metered all of it.
    const billed = billedUsd(messages);
    expect(billed).toBeGreaterThan(BUDGET_USD / 2);
    expect(billed).toBeLessThanOrEqual(BUDGET_USD);
    if (!metered) throw new Error("nothing was metered");
    const { usd, turns } = metered;
    expect(usd).toBeGreaterThanOrEqual(billed);
    expect(usd).toBeLessThanOrEqual(BUDGET_USD);
    expect(turns).toBe(messages.filter((r) => r.billed).length);
    for (const stream of attack("abandon-me"))
      expect(stream.billed?.usage.input_tokens).toBeGreaterThan(5_000);

    // Server tools and MCP servers never reach the API; a beta Claude Code does not send is dropped.
    expect([lines("server-tool"), lines("mcp-servers")]).toEqual([["400"], ["400"]]);
    expect(attack("attacker.example")).toEqual([]);
    const [withBeta] = attack("beta-me");
    expect(withBeta?.headers["anthropic-beta"]).toBe("claude-code-20250219");
  });
});
