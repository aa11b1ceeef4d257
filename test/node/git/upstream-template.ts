import { rm } from "node:fs/promises";
import { afterAll, beforeAll } from "vitest";
import { tempDir, Upstream } from "./support.ts";

/**
 * For a file whose every test starts from a fresh upstream: builds one in `beforeAll` and gives each test a
 * copy under its own root, sparing each test the dozen git processes of building one.
 */
export function upstreamTemplate(): { copyTo(root: string): Promise<Upstream> } {
  let root = "";
  let built: Upstream | undefined;
  beforeAll(async () => {
    root = await tempDir("upstream-template");
    built = await Upstream.create(root);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));
  return {
    copyTo: (into) => {
      if (!built) throw new Error("upstreamTemplate() is used from a test, after its beforeAll");
      return built.copyTo(into);
    },
  };
}
