import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { refreshMirrors, warmMirrors } from "../../../runner/git/mirror-warmer.ts";
import { resolveRef } from "../../../runner/git/repository.ts";
import { Workspace } from "../../../runner/git/workspace.ts";
import { Logger } from "../../../runner/log.ts";
import { Secrets } from "../../../runner/redact.ts";
import { until } from "../runner/support/observe.ts";
import { tempDir, Upstream } from "./support.ts";

const REPO = "acme/widgets";

let root = "";
let upstream: Upstream;
let ws: Workspace;
let lines: Record<string, unknown>[];
let log: Logger;

beforeEach(async () => {
  root = await tempDir("mirror-warmer");
  upstream = await Upstream.create(root);
  ws = new Workspace({ workDir: join(root, "work") });
  lines = [];
  log = new Logger({
    level: "debug",
    secrets: new Secrets(),
    write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
  });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const baseInMirror = () => resolveRef(ws.mirrorPath(REPO), "refs/remotes/origin/main");

describe("the warm mirrors", () => {
  it("fetch what landed on the base since the last claim, before the next claim asks", async () => {
    await ws.ensureMirror({ repoKey: REPO, remoteUrl: `file://${upstream.path}` });
    const landed = await upstream.commit({ "src/c.txt": "c\n" }, "landed meanwhile");
    expect(await baseInMirror()).not.toBe(landed);

    await refreshMirrors(ws, log);
    expect(await baseInMirror()).toBe(landed);
  });

  it("are refreshed on the runner's timer", async () => {
    await ws.ensureMirror({ repoKey: REPO, remoteUrl: `file://${upstream.path}` });
    const landed = await upstream.commit({ "src/c.txt": "c\n" }, "landed meanwhile");
    const stop = new AbortController();
    warmMirrors(ws, log, stop.signal, 20);
    await until(() => lines.some((line) => line.msg === "mirror refreshed"));
    stop.abort();
    expect(await baseInMirror()).toBe(landed);
  });

  it("log a forge that cannot be reached and leave the mirror as it was", async () => {
    await ws.ensureMirror({ repoKey: REPO, remoteUrl: `file://${upstream.path}` });
    const before = await baseInMirror();
    await rename(upstream.path, `${upstream.path}.gone`);

    await refreshMirrors(ws, log);
    expect(await baseInMirror()).toBe(before);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: "warn", msg: "could not refresh a mirror" }),
    );
  });
});
