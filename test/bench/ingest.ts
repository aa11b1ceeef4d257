/**
 * Webhook ingestion on the local Worker: signed Forgejo deliveries with 20 % duplicates, against the trivial
 * route on the same setup as the baseline; and the latency from a "labeled backlog" delivery to queued.
 */
import { createHmac, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { forgejoHeaders } from "../support/webhook-headers.ts";
import { TEST_ADMIN_TOKEN } from "../support/worker.ts";
import { emit, load, percentile } from "./load.ts";

const SECRET = "bench webhook secret of length";
const REPO = "gogits/hello-world";
const template = JSON.parse(
  readFileSync(
    new URL("../../../shared/fixtures/webhooks/gitea/issues.opened.json", import.meta.url),
    "utf8",
  ),
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

async function register(url: string, project: string) {
  const res = await fetch(`${url}/api/v1/projects/${project}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
    // Port 9 (discard) refuses at once: the forge effects fail fast and wait in the outbox.
    body: JSON.stringify({
      forge: "forgejo",
      apiUrl: "http://127.0.0.1:9/api/v1",
      repo: REPO,
      webhookSecret: SECRET,
      forgeToken: "t",
    }),
  });
  if (!res.ok) throw new Error(`register ${project}: ${res.status} ${await res.text()}`);
}

async function expectStatus(res: Response, ...statuses: number[]) {
  await res.arrayBuffer();
  if (!statuses.includes(res.status)) throw new Error(`unexpected ${res.status}`);
}

export async function benchIngest(url: string, { total = 2_000, concurrency = 16 } = {}) {
  await register(url, "bench-ingest");
  await register(url, "bench-label");

  // Warm both paths so neither pays for first-request compilation.
  await load(50, 4, async () => expectStatus(await fetch(`${url}/healthz`), 200));
  const trivial = await load(total, concurrency, async () =>
    expectStatus(await fetch(`${url}/healthz`), 200),
  );
  const trivialRps = total / trivial.seconds;
  emit({ name: "trivial_route_throughput", value: trivialRps, unit: "req/s" });
  emit({ name: "trivial_route_p99", value: percentile(trivial.latenciesMs, 99), unit: "ms" });

  const unique = Array.from({ length: Math.ceil(total * 0.8) }, (_, i) =>
    issueDelivery("edited", 10_000 + i, []),
  );
  // Every fifth delivery repeats an earlier one: same delivery id and bytes, as a forge redelivery sends.
  const deliveries = Array.from({ length: total }, (_, i) =>
    i % 5 === 4 ? unique[Math.floor(i / 5) * 4] : unique[i - Math.floor(i / 5)],
  );
  const ingest = await load(total, concurrency, async (i) => {
    const d = deliveries[i];
    if (!d) throw new Error(`no delivery ${i}`);
    await expectStatus(
      await fetch(`${url}/hooks/bench-ingest`, { method: "POST", headers: d.headers, body: d.body }),
      200,
      202,
    );
  });
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
  const single = await load(300, 1, async () => expectStatus(await fetch(`${url}/healthz`), 200));
  const trivialP99 = percentile(single.latenciesMs, 99);
  let issue = 1;
  const label = await load(300, 1, async () => {
    const d = issueDelivery("label_updated", issue++, ["backlog"]);
    const res = await fetch(`${url}/hooks/bench-label`, { method: "POST", headers: d.headers, body: d.body });
    const answer = (await res.json()) as { events?: number };
    if (res.status !== 202 || answer.events !== 1)
      throw new Error(`label: ${res.status} ${JSON.stringify(answer)}`);
  });
  emit({ name: "trivial_route_p99_1conn", value: trivialP99, unit: "ms" });
  emit({ name: "label_to_queued_p50", value: percentile(label.latenciesMs, 50), unit: "ms" });
  emit({
    name: "label_to_queued_p99",
    value: percentile(label.latenciesMs, 99),
    unit: "ms",
    target: "< 3x baseline",
    baseline: trivialP99,
  });
}
