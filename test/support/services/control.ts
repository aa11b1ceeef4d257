/**
 * The Node-side services workerd tests need (a local forge, the Messages-API stand-in) and a small control
 * API over HTTP, since tests inside workerd can neither spawn git nor call into Node objects. Below `/down/`
 * the control server plays a forge that is down (502 from its proxy): a refused connection would do too, but
 * workerd reports every refused fetch as an uncaught exception, handled or not. Below `/alerts/` it is the
 * operator's alert webhook (the Worker's ALERT_WEBHOOK_URL in the tests): it keeps what it is sent, for
 * `alerts-received`, and answers as Slack's and Discord's do (`ok`).
 */

import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { createForgeClient } from "../../../src/forge/client/index.ts";
import { type ImportedIssue, type LocalForge, startLocalForge } from "../forge/index.ts";
import { type ModelStandIn, startModelStandIn } from "../model/server.ts";
import { startWoodpecker } from "../woodpecker.ts";
import { CriticScript } from "./critic-script.ts";
import { pushFiles } from "./git-push.ts";

export type Services = {
  forgeUrl: string;
  forgeApiUrl: string;
  /** Conveyor's forge account: admin of every repository the control API creates. */
  conveyorToken: string;
  modelUrl: string;
  controlUrl: string;
  /** A Woodpecker API with one red pipeline: test/support/woodpecker.ts. */
  woodpeckerUrl: string;
};

const files = z.record(z.string(), z.string());
const schemas = {
  repo: z.object({ name: z.string(), files }),
  push: z.object({
    repo: z.string(),
    branch: z.string(),
    files,
    executable: z.array(z.string()).default([]),
    message: z.string().default("change"),
    /** Merge the base into the branch first (conflicts and all): `files` are then the resolution. */
    mergeBase: z.boolean().default(false),
  }),
  user: z.object({
    repo: z.string(),
    login: z.string(),
    level: z.enum(["admin", "write", "read"]).nullable(),
  }),
  critic: z.object({
    key: z.string(),
    answers: z.array(z.union([z.object({ report: z.unknown() }), z.object({ text: z.string() })])),
  }),
  criticCalls: z.object({ key: z.string() }),
  pull: z.object({ repo: z.string(), number: z.number() }),
  commit: z.object({ repo: z.string(), ref: z.string().min(1) }),
  apiCalls: z.object({ repo: z.string() }),
  /** The local forge parses each issue (test/support/forge/import.ts). */
  importIssues: z.object({ repo: z.string(), issues: z.array(z.unknown()) }),
  rateLimit: z.object({ login: z.string(), used: z.number().int().min(0) }),
  slowMerges: z.object({ repo: z.string(), ms: z.number().int().min(0) }),
  mergeChecks: z.object({ repo: z.string(), reads: z.number().int().min(0) }),
  lostUpdates: z.object({ repo: z.string(), count: z.number().int().min(0) }),
  refuseWrites: z.object({
    repo: z.string(),
    count: z.number().int().min(0),
    retryAfterSeconds: z.number().int().min(0),
  }),
  failReads: z.object({
    repo: z.string(),
    path: z.string().startsWith("/"),
    fault: z
      .discriminatedUnion("kind", [
        z.object({ kind: z.literal("missing") }),
        z.object({ kind: z.literal("error") }),
        z.object({ kind: z.literal("rate-limited"), retryAfterSeconds: z.number().int().min(0) }),
      ])
      .nullable(),
  }),
  listing: z.object({
    repo: z.string(),
    pageSize: z.number().int().min(0).optional(),
    before: z
      .object({
        page: z.number().int().min(1),
        /** Wait for the forge's clock to reach the next second first: the change gets a later stamp. */
        nextSecond: z.boolean().default(false),
        action: z.discriminatedUnion("kind", [
          z.object({ kind: z.literal("edit"), number: z.number().int(), body: z.string() }),
          z.object({ kind: z.literal("close"), number: z.number().int() }),
          z.object({
            kind: z.literal("create"),
            title: z.string(),
            body: z.string().default(""),
            labels: z.array(z.string()).default([]),
          }),
        ]),
      })
      .optional(),
  }),
};

export async function startServices(): Promise<{ services: Services; stop(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), "conveyor-services-"));
  const forge: LocalForge = await startLocalForge({ dataDir });
  const conveyor = forge.createUser("conveyor");
  const critic = new CriticScript();
  const model: ModelStandIn = await startModelStandIn({ script: (req) => critic.turn(req) });
  const woodpecker = await startWoodpecker();

  const alertsReceived: unknown[] = [];
  const actions: Record<string, (body: unknown) => Promise<unknown>> = {
    "alerts-received": async () => alertsReceived,
    repo: async (body) => {
      const { name, files: seed } = schemas.repo.parse(body);
      const repo = await forge.createRepo({ owner: "acme", name, seed: { files: seed } });
      forge.addCollaborator(repo.fullName, conveyor.login, "admin");
      return repo;
    },
    push: async (body) => {
      const { repo, branch, files: changed, executable, message, mergeBase } = schemas.push.parse(body);
      const sha = await pushFiles({
        cloneUrl: forge.cloneUrl(repo, forge.admin.token),
        branch,
        base: "main",
        files: changed,
        executable,
        message,
        mergeBase,
      });
      await forge.settled();
      return { sha };
    },
    user: async (body) => {
      const { repo, login, level } = schemas.user.parse(body);
      const user = existingOrNew(forge, login);
      if (level) forge.addCollaborator(repo, login, level);
      return user;
    },
    critic: async (body) => {
      const { key, answers } = schemas.critic.parse(body);
      critic.enqueue(key, answers);
      return { queued: answers.length };
    },
    commit: async (body) => {
      const { repo, ref } = schemas.commit.parse(body);
      return forge.commit(repo, ref);
    },
    "critic-calls": async (body) => {
      const { key } = schemas.criticCalls.parse(body);
      return { calls: critic.calls(key), prompts: critic.prompts(key) };
    },
    "slow-merges": async (body) => {
      const { repo, ms } = schemas.slowMerges.parse(body);
      forge.slowMergeAnswers(repo, ms);
      return { ok: true };
    },
    writes: async (body) => forge.writesTo(schemas.apiCalls.parse(body).repo),
    "refuse-writes": async (body) => {
      const { repo, count, retryAfterSeconds } = schemas.refuseWrites.parse(body);
      forge.refuseWrites(repo, count, retryAfterSeconds);
      return { ok: true };
    },
    "fail-reads": async (body) => {
      const { repo, path, fault } = schemas.failReads.parse(body);
      forge.failReads(repo, path, fault);
      return { ok: true };
    },
    "lose-update-answers": async (body) => {
      const { repo, count } = schemas.lostUpdates.parse(body);
      forge.loseUpdateAnswers(repo, count);
      return { ok: true };
    },
    "merge-checks": async (body) => {
      const { repo, reads } = schemas.mergeChecks.parse(body);
      forge.mergeCheckReads(repo, reads);
      return { ok: true };
    },
    listing: async (body) => {
      const { repo, pageSize, before } = schemas.listing.parse(body);
      if (pageSize !== undefined) forge.listingPageSize(repo, pageSize);
      if (before) forge.beforeListingPage(repo, before.page, () => changeIssue(forge, repo, before));
      return { ok: true };
    },
    settled: async () => {
      await forge.settled();
      return { ok: true };
    },
    requests: async () => model.requests.length,
    "import-issues": async (body) => {
      const { repo, issues } = schemas.importIssues.parse(body);
      return { numbers: forge.importIssues(repo, issues as ImportedIssue[]) };
    },
    "api-calls": async (body) => forge.apiCalls(schemas.apiCalls.parse(body).repo),
    "rate-limit": async (body) => {
      const { login, used } = schemas.rateLimit.parse(body);
      forge.spendRateLimit(login, used);
      return { ok: true };
    },
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      // A forge that is down behind its proxy: every request below /down/ is a 502, as a gateway answers.
      if (req.url?.startsWith("/down/")) {
        res
          .writeHead(502, { "content-type": "text/html" })
          .end("<html><body>502 Bad Gateway</body></html>\n");
        return;
      }
      if (req.method === "POST" && req.url?.startsWith("/alerts/")) {
        alertsReceived.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        res.writeHead(200, { "content-type": "text/plain" }).end("ok");
        return;
      }
      const action = actions[(req.url ?? "").replace(/^\//, "")];
      try {
        if (!action) throw new Error(`no control action ${req.url}`);
        const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
        const result = JSON.stringify(await action(body));
        res.writeHead(200, { "content-type": "application/json" }).end(result);
      } catch (error) {
        res
          .writeHead(500, { "content-type": "application/json" })
          .end(JSON.stringify({ error: String(error) }));
      }
    });
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const { port } = server.address() as AddressInfo;
  return {
    services: {
      forgeUrl: forge.url,
      forgeApiUrl: forge.apiUrl,
      conveyorToken: conveyor.token,
      modelUrl: model.url,
      controlUrl: `http://127.0.0.1:${port}`,
      woodpeckerUrl: woodpecker.url,
    },
    stop: async () => {
      await new Promise((r) => server.close(r));
      await model.close();
      await woodpecker.close();
      await forge.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A change a test lands between two pages of a listing, made by the forge's admin as a human would. */
async function changeIssue(
  forge: LocalForge,
  repo: string,
  { nextSecond, action }: NonNullable<z.infer<typeof schemas.listing>["before"]>,
): Promise<void> {
  if (nextSecond) await new Promise((later) => setTimeout(later, 1000 - (Date.now() % 1000) + 5));
  const client = createForgeClient({
    forge: "forgejo",
    apiUrl: forge.apiUrl,
    repo,
    token: forge.admin.token,
  });
  if (action.kind === "edit") await client.editIssueBody(action.number, action.body);
  else if (action.kind === "close") await client.closeIssue(action.number);
  else await client.createIssue({ title: action.title, body: action.body, labels: action.labels });
}

/** Users are shared across tests: an existing one gets a fresh token. */
function existingOrNew(forge: LocalForge, login: string): { login: string; token: string } {
  try {
    return { login, token: forge.createToken(login) };
  } catch {
    return forge.createUser(login);
  }
}
