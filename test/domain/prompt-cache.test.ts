import { describe, expect, it } from "vitest";
import { LONG_CI_WAIT_MS, promptCacheTtl } from "../../src/domain/prompt-cache.ts";

const MINUTE = 60_000;

describe("the prompt cache's lifetime", () => {
  it("is the setting when the setting names one", () => {
    expect(promptCacheTtl("1h", [])).toBe("1h");
    expect(promptCacheTtl("5m", Array(10).fill(30 * MINUTE))).toBe("5m");
  });

  it("keeps the API's 5 minutes until three CI waits are known", () => {
    expect(promptCacheTtl("auto", [])).toBe("5m");
    expect(promptCacheTtl("auto", [20 * MINUTE, 20 * MINUTE])).toBe("5m");
  });

  it("is an hour once at least half of the CI waits were 4 minutes or longer", () => {
    expect(promptCacheTtl("auto", [LONG_CI_WAIT_MS, MINUTE, LONG_CI_WAIT_MS + 1])).toBe("1h");
    expect(promptCacheTtl("auto", [LONG_CI_WAIT_MS, MINUTE, 2 * MINUTE, 8 * MINUTE])).toBe("1h");
    expect(promptCacheTtl("auto", [LONG_CI_WAIT_MS - 1, MINUTE, 2 * MINUTE, 8 * MINUTE])).toBe("5m");
  });
});
