/**
 * A Woodpecker API stand-in with one red pipeline (repo 7, pipeline 42) in Woodpecker's own JSON
 * (server/model: Pipeline.workflows[].children are Steps; LogEntry.data is []byte, so base64).
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

export type WoodpeckerStandIn = {
  url: string;
  seen: { path: string; auth?: string }[];
  /** How it answers the log: as Woodpecker does, never (a stalled server), or with a body that never ends. */
  logs: "normal" | "stall" | "endless";
  close(): Promise<void>;
};

export async function startWoodpecker(): Promise<WoodpeckerStandIn> {
  const seen: { path: string; auth?: string }[] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", ...(req.headers.authorization && { auth: req.headers.authorization }) });
    if (req.url === "/api/repos/7/logs/42/502" && stand.logs !== "normal") {
      if (stand.logs === "endless") endless(res);
      return;
    }
    const body =
      req.url === "/api/repos/7/pipelines/42"
        ? RED_PIPELINE
        : req.url === "/api/repos/7/logs/42/502"
          ? RED_LOG
          : null;
    res
      .writeHead(body ? 200 : 404, { "content-type": "application/json" })
      .end(JSON.stringify(body ?? { error: "not found" }));
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
