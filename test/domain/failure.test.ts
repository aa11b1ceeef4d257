import { describe, expect, it } from "vitest";
import { classifyFailure, deadLetters, failureOf, polls } from "../../src/domain/failure.ts";
import { ForgeHttpError, ForgeNetworkError, ForgeRateLimitError } from "../../src/forge/client/errors.ts";

const info = { forge: "github", method: "POST", path: "/repos/o/r/pulls" };

describe("classifyFailure", () => {
  it.each([
    [403, "Resource not accessible by integration"],
    [404, "Not Found"],
    [410, "This issue was deleted"],
    [422, "No commits between main and conveyor/7"],
  ])("a %i with a reason is permanent", (status, reason) => {
    expect(classifyFailure(failureOf(new ForgeHttpError(info, status, reason)))).toBe("permanent");
  });

  // 401: a token being rotated, or not yet set up; retried (bounded) rather than given up at once.
  it.each([500, 502, 503, 409, 401])("a %i is transient", (status) => {
    expect(classifyFailure(failureOf(new ForgeHttpError(info, status, "try again")))).toBe("transient");
  });

  it("a 422 without a reason is transient", () => {
    expect(classifyFailure(failureOf(new ForgeHttpError(info, 422, "")))).toBe("transient");
  });

  it("a rate limit is transient, whatever its status", () => {
    const limited = new ForgeRateLimitError(
      info,
      403,
      "API rate limit exceeded",
      Date.now() + 60_000,
      60_000,
    );
    expect(classifyFailure(failureOf(limited))).toBe("transient");
    expect(classifyFailure(failureOf(new ForgeRateLimitError(info, 429, "", 0, 0)))).toBe("transient");
  });

  it("no answer at all, or our own error, is transient", () => {
    expect(classifyFailure(failureOf(new ForgeNetworkError(info, "connection reset")))).toBe("transient");
    expect(classifyFailure(failureOf(new Error("the pull request's number is not known yet")))).toBe(
      "transient",
    );
    expect(classifyFailure(failureOf("a string"))).toBe("transient");
  });

  it("keeps the error's message", () => {
    expect(failureOf(new ForgeHttpError(info, 403, "forbidden")).message).toBe(
      "github: POST /repos/o/r/pulls returned 403: forbidden",
    );
  });
});

describe("a poll's not-yet", () => {
  class Pending extends Error {
    readonly waiting = true;
  }

  it("is waiting, never given up on however long it takes", () => {
    const kind = classifyFailure(failureOf(new Pending("CI pending for abc")));
    expect(kind).toBe("waiting");
    expect(deadLetters(kind, 1_000, 25)).toBe(false);
  });

  it("is polled; a wait on a forge that does not answer, and any failure, keep the failure backoff", () => {
    class Silent extends Pending {
      readonly backoff = true;
    }
    expect(polls(failureOf(new Pending("CI pending")))).toBe(true);
    expect(polls(failureOf(new Silent("the forge does not answer yet")))).toBe(false);
    expect(polls(failureOf(new ForgeNetworkError(info, "reset")))).toBe(false);
    expect(polls(failureOf(new Error("boom")))).toBe(false);
  });
});

describe("deadLetters", () => {
  it("a permanent failure at its first attempt", () => {
    expect(deadLetters("permanent", 1, 25)).toBe(true);
  });

  it("a transient failure once the attempts are spent", () => {
    expect(deadLetters("transient", 24, 25)).toBe(false);
    expect(deadLetters("transient", 25, 25)).toBe(true);
  });
});
