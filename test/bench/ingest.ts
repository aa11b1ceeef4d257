/**
 * Webhook ingestion on the local Worker: signed Forgejo deliveries with 20 % duplicates, against the trivial
 * route on the same setup as the baseline; and the latency from a "labeled backlog" delivery to queued.
 */
import { createHmac, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tempDir } from "../node/git/support.ts";
import { startLocalForge } from "../support/forge/index.ts";
import { forgejoHeaders } from "../support/webhook-headers.ts";
import { TEST_ADMIN_TOKEN } from "../support/worker.ts";
import { alternate, emit, load, percentile } from "./load.ts";

const SECRET = "bench webhook secret of length";
/** Throughput rounds; one-connection samples per side and their rounds. */
const ROUNDS = 4;
const SINGLE = 1_000;
const SINGLE_ROUNDS = 10;
const REPO = "gogits/hello-world";
const template = JSON.parse(
  readFileSync(new URL("../fixtures/webhooks/gitea/issues.opened.json", import.meta.url), "utf8"),
);

function issueDelivery(action: string, number: number, labels: string[]) {
  const body = Buffer.from(
    JSON.stringify(
      {
        ...template,
        action,
        issue: { ...template.issue, number, body: "", labels: labels.map((name, id) => ({ id, name })) },
      },
      null,
      2,
    ),
  );
  const sha256 = createHmac("sha256", SECRET).update(body).digest("hex");
  const sha1 = createHmac("sha1", SECRET).update(body).digest("hex");
  const type = action === "label_updated" ? "issue_label" : "issues";
  const headers = forgejoHeaders({ grouped: "issues", type }, { sha1, sha256 }, randomUUID());
  return { body, headers };
}

/** Port 9 (discard) refuses at once: the forge effects fail fast and wait in the outbox. */
const NO_FORGE = { apiUrl: "http://127.0.0.1:9/api/v1", forgeToken: "t" };

async function register(
  url: string,
  project: string,
  forge: { apiUrl: string; forgeToken: string } = NO_FORGE,
) {
  const res = await fetch(`${url}/api/v1/projects/${project}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ forge: "forgejo", repo: REPO, webhookSecret: SECRET, ...forge }),
  });
  if (!res.ok) throw new Error(`register ${project}: ${res.status} ${await res.text()}`);
}

async function expectStatus(res: Response, ...statuses: number[]) {
  await res.arrayBuffer();
  if (!statuses.includes(res.status)) throw new Error(`unexpected ${res.status}`);
}

/**
 * Only a writer's label queues work: the label bench's project reads the sender's permission from a local
 * forge where the fixtures' sender (`unknwon`) has write access to the fixtures' repository.
 */
async function labelForge() {
  const dataDir = await tempDir("bench-label-forge");
  const forge = await startLocalForge({ dataDir, ci: { enabled: false } });
  const [owner = "", name = ""] = REPO.split("/");
  await forge.createRepo({ owner, name, seed: { files: { "README.md": "#\n" } } });
  const { token } = forge.createUser("conveyor");
  forge.addCollaborator(REPO, "conveyor", "admin");
  forge.createUser(template.sender.login);
  forge.addCollaborator(REPO, template.sender.login, "write");
  const close = async () => {
    await forge.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  return { close, link: { apiUrl: forge.apiUrl, forgeToken: token } };
}

export async function benchIngest(url: string, { total = 2_000, concurrency = 16 } = {}) {
  const { close, link } = await labelForge();
  try {
    await register(url, "bench-ingest");
    await register(url, "bench-label", link);
    await measure(url, total, concurrency);
  } finally {
    await close();
  }
}

async function measure(url: string, total: number, concurrency: number) {
  const unique = Array.from({ length: Math.ceil(total * 0.8) }, (_, i) =>
    issueDelivery("edited", 10_000 + i, []),
  );
  // Every fifth delivery repeats an earlier one: same delivery id and bytes, as a forge redelivery sends.
  const deliveries = Array.from({ length: total }, (_, i) =>
    i % 5 === 4 ? unique[Math.floor(i / 5) * 4] : unique[i - Math.floor(i / 5)],
  );
  const perRound = total / ROUNDS;
  const healthz = async () => expectStatus(await fetch(`${url}/healthz`), 200);
  // Warm both paths so neither pays for first-request compilation.
  await load(50, 4, healthz);
  const [trivial, ingest] = await alternate(
    ROUNDS,
    () => load(perRound, concurrency, healthz),
    (round) =>
      load(perRound, concurrency, async (i) => {
        const d = deliveries[round * perRound + i];
        if (!d) throw new Error(`no delivery ${round * perRound + i}`);
        const init = { method: "POST", headers: d.headers, body: d.body };
        await expectStatus(await fetch(`${url}/hooks/bench-ingest`, init), 200, 202);
      }),
  );
  const trivialRps = total / trivial.seconds;
  emit({ name: "trivial_route_throughput", value: trivialRps, unit: "req/s" });
  emit({ name: "trivial_route_p99", value: percentile(trivial.latenciesMs, 99), unit: "ms" });
  const ingestRps = total / ingest.seconds;
  emit({
    name: "webhook_ingest_throughput",
    value: ingestRps,
    unit: "deliveries/s",
    target: ">= 50% of baseline",
    baseline: trivialRps,
  });
  emit({ name: "webhook_ingest_p50", value: percentile(ingest.latenciesMs, 50), unit: "ms" });
  emit({
    name: "webhook_ingest_p99",
    value: percentile(ingest.latenciesMs, 99),
    unit: "ms",
    target: "< 100",
  });

  // One connection: label → queued is answered only once the issue's Durable Object recorded `queued`.
  // A thousand samples each: a p99 of a few hundred is its third-worst sample, too noisy to compare.
  let issue = 1;
  const label = async () => {
    const d = issueDelivery("label_updated", issue++, ["backlog"]);
    const res = await fetch(`${url}/hooks/bench-label`, { method: "POST", headers: d.headers, body: d.body });
    const answer = (await res.json()) as { events?: number };
    if (res.status !== 202 || answer.events !== 1)
      throw new Error(`label: ${res.status} ${JSON.stringify(answer)}`);
  };
  await load(20, 1, label); // warmed like the trivial route
  const [single, labels] = await alternate(
    SINGLE_ROUNDS,
    () => load(SINGLE / SINGLE_ROUNDS, 1, healthz),
    () => load(SINGLE / SINGLE_ROUNDS, 1, label),
  );
  const trivialP99 = percentile(single.latenciesMs, 99);
  emit({ name: "trivial_route_p50_1conn", value: percentile(single.latenciesMs, 50), unit: "ms" });
  emit({ name: "trivial_route_p99_1conn", value: trivialP99, unit: "ms" });
  emit({ name: "label_to_queued_p50", value: percentile(labels.latenciesMs, 50), unit: "ms" });
  emit({
    name: "label_to_queued_p99",
    value: percentile(labels.latenciesMs, 99),
    unit: "ms",
    target: "< 3x baseline",
    baseline: trivialP99,
  });
}
