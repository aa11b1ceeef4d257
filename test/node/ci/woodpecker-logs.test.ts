import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { woodpeckerLogs } from "../../../src/ci/woodpecker-logs.ts";
import { startWoodpecker, type WoodpeckerStandIn } from "../../support/woodpecker.ts";

let woodpecker: WoodpeckerStandIn;
beforeAll(async () => {
  woodpecker = await startWoodpecker();
});
afterAll(() => woodpecker.close());

describe("woodpeckerLogs", () => {
  it("finds the pipeline from the status target URL and returns the failing step's log", async () => {
    const { url } = woodpecker;
    const excerpt = await woodpeckerLogs({ url, token: "wp-token" }, [null, `${url}/repos/7/pipeline/42/1`]);
    expect(excerpt).toBe(
      ["--- test / unit (failure) ---", "+ npm test", "not ok 1 - parse('') returns null", "", "1"].join(
        "\n",
      ),
    );
    expect(woodpecker.seen).toEqual([
      { path: "/api/repos/7/pipelines/42", auth: "Bearer wp-token" },
      { path: "/api/repos/7/logs/42/502", auth: "Bearer wp-token" },
    ]);
  });

  it("is null for a target URL on another server, or when the API refuses", async () => {
    const { url } = woodpecker;
    expect(
      await woodpeckerLogs({ url, token: "t" }, ["https://ci.example.org/repos/7/pipeline/42"]),
    ).toBeNull();
    expect(await woodpeckerLogs({ url, token: "t" }, [`${url}/repos/8/pipeline/1`])).toBeNull();
  });

  describe("a server that misbehaves costs a bounded wait and bounded memory", () => {
    afterAll(() => {
      woodpecker.logs = "normal";
    });

    it("gives up on a log that never comes at the deadline", async () => {
      const { url } = woodpecker;
      woodpecker.logs = "stall";
      const api = { url, token: "t", timeoutMs: 500 };
      expect(await woodpeckerLogs(api, [`${url}/repos/7/pipeline/42`])).toBeNull();
    });

    it("stops reading a log past the size cap", async () => {
      const { url } = woodpecker;
      woodpecker.logs = "endless";
      const api = { url, token: "t", maxBodyBytes: 1024 * 1024 };
      expect(await woodpeckerLogs(api, [`${url}/repos/7/pipeline/42`])).toBeNull();
    });
  });
});
