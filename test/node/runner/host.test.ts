import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { measureHost, memAvailable } from "../../../runner/host.ts";
import { hostReportSchema } from "../../../src/runner-api/contract.ts";
import { tempDir } from "../git/support.ts";

let root = "";

beforeEach(async () => {
  root = await tempDir("host");
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("the host's memory and load", () => {
  it("reads MemAvailable from a meminfo file, in bytes", async () => {
    const file = join(root, "meminfo");
    await writeFile(file, "MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    8000000 kB\n");
    expect(memAvailable(file)).toBe(8_000_000 * 1024);
    await writeFile(file, "MemTotal:       16000000 kB\n");
    expect(memAvailable(file)).toBeUndefined();
    expect(memAvailable(join(root, "missing"))).toBeUndefined();
  });

  it("is a report the Worker accepts, whether /proc is there or not", () => {
    for (const report of [measureHost(), measureHost(join(root, "missing"))]) {
      expect(hostReportSchema.parse(report)).toEqual(report);
      expect(report.memAvailableBytes).toBeLessThanOrEqual(report.memTotalBytes);
    }
  });
});
