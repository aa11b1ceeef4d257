/**
 * A Woodpecker API stand-in for repo 7 in Woodpecker's own JSON (server/model: Pipeline.workflows[].children
 * are Steps; LogEntry.data is []byte, so base64): one red pipeline (42) with a log, those a test adds
 * (`POST /test/pipelines` with their commit and status: `killed` is how Woodpecker reports a cancelled
 * one), the repository's pipelines newest first
 * (`GET /api/repos/7/pipelines`), and a pipeline's restart (`POST /api/repos/7/pipelines/{number}`, which
 * Woodpecker answers with the new pipeline: the next number, its `parent` the restarted one; 401 without a
 * token, 404 for no such pipeline). A restarted pipeline reports nothing to the forge by itself: a test plays
 * its status report.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const b64 = (text: string) => Buffer.from(text).toString("base64");

export const RED_PIPELINE = {
  id: 311,
  number: 42,
  status: "failure",
  workflows: [
    {
      id: 90,
      pipeline_id: 311,
      pid: 1,
      name: "test",
      state: "failure",
      children: [
        {
          id: 501,
          uuid: "a",
          pipeline_id: 311,
          pid: 2,
          ppid: 1,
          name: "clone",
          state: "success",
          exit_code: 0,
        },
        {
          id: 502,
          uuid: "b",
          pipeline_id: 311,
          pid: 3,
          ppid: 1,
          name: "unit",
          state: "failure",
          exit_code: 1,
        },
      ],
    },
  ],
};

export const RED_LOG = [
  { id: 1, step_id: 502, time: 0, line: 0, data: b64("+ npm test\n"), type: 0 },
  { id: 2, step_id: 502, time: 1, line: 1, data: b64("not ok 1 - parse('') returns null\n"), type: 0 },
  { id: 3, step_id: 502, time: 2, line: 2, data: null, type: 0 },
  { id: 4, step_id: 502, time: 3, line: 3, data: b64("1\n"), type: 2 },
];

/** A pipeline the server cancelled: its one step killed. */
type Pipeline = {
  id: number;
  number: number;
  status: string;
  commit?: string;
  parent?: number;
  workflows: unknown[];
};

export type WoodpeckerStandIn = {
  url: string;
  seen: { path: string; auth?: string }[];
  /** How it answers the log: as Woodpecker does, never (a stalled server), or with a body that never ends. */
  logs: "normal" | "stall" | "endless";
  close(): Promise<void>;
};

export async function startWoodpecker(): Promise<WoodpeckerStandIn> {
  const seen: { path: string; auth?: string }[] = [];
  const pipelines: Pipeline[] = [RED_PIPELINE];
  const add = (pipeline: Omit<Pipeline, "id" | "number" | "workflows">) => {
    const number = Math.max(...pipelines.map((p) => p.number)) + 1;
    const created = { id: 300 + number, number, workflows: [], ...pipeline };
    pipelines.unshift(created);
    return created;
  };
  const server: Server = createServer(async (req, res) => {
    seen.push({ path: req.url ?? "", ...(req.headers.authorization && { auth: req.headers.authorization }) });
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    // The tests' own door: a pipeline of `commit` as the CI ran it (`killed`: cancelled), for its status to link.
    if (req.method === "POST" && req.url === "/test/pipelines") {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const { commit, status } = JSON.parse(Buffer.concat(chunks).toString()) as Pipeline;
      return json(201, add({ commit, status }));
    }
    if (req.method === "POST") {
      const restart = /^\/api\/repos\/7\/pipelines\/(\d+)$/.exec(req.url ?? "");
      const parent = restart && pipelines.find((p) => p.number === Number(restart[1]));
      if (!req.headers.authorization?.startsWith("Bearer ")) return json(401, { error: "Unauthorized" });
      if (!parent) return json(404, { error: "not found" });
      return json(200, add({ status: "pending", commit: parent.commit, parent: parent.number }));
    }
    if (req.url === "/api/repos/7/pipelines") return json(200, pipelines);
    if (req.url === "/api/repos/7/logs/42/502" && stand.logs !== "normal") {
      if (stand.logs === "endless") endless(res);
      return;
    }
    const pipeline = /^\/api\/repos\/7\/pipelines\/(\d+)$/.exec(req.url ?? "");
    const body = pipeline
      ? pipelines.find((p) => p.number === Number(pipeline[1]))
      : req.url === "/api/repos/7/logs/42/502"
        ? RED_LOG
        : null;
    json(body ? 200 : 404, body ?? { error: "not found" });
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const stand: WoodpeckerStandIn = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    logs: "normal",
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
  return stand;
}

/** A JSON array that never closes, written as fast as the client reads it, until it hangs up. */
function endless(res: ServerResponse): void {
  const entry = `${JSON.stringify(RED_LOG[1])},`;
  const chunk = `${entry.repeat(Math.ceil(65_536 / entry.length))}`;
  res.writeHead(200, { "content-type": "application/json" });
  res.write("[");
  const more = () => {
    while (!res.destroyed && res.write(chunk)) {}
    if (!res.destroyed) res.once("drain", more);
  };
  res.on("close", () => res.removeAllListeners("drain"));
  more();
}
