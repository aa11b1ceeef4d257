import { describe, expect, it } from "vitest";
import { needsWriter, queuer } from "../../src/domain/queueing.ts";

const event = (action: string, label: string | null = null) => ({
  action,
  label,
  sender: "sender",
  issue: { author: "author" },
});

describe("queuer", () => {
  it.each([
    ["opened (a template's label is the author's)", event("opened"), "author"],
    ["labeled backlog", event("labeled", "backlog"), "sender"],
    ["labeled something else", event("labeled", "bug"), null],
    ["Gitea's label_updated names no label", event("labels_updated"), "sender"],
    ["edited", event("edited"), "sender"],
    ["reopened", event("reopened"), "sender"],
    ["unlabeled", event("unlabeled", "bug"), null],
    ["closed", event("closed"), null],
  ])("%s → %s", (_name, e, expected) => {
    expect(queuer(e, "backlog", "conveyor")).toBe(expected);
  });

  it.each(["opened", "labeled", "labels_updated", "edited", "reopened"])(
    "%s sent by Conveyor's own account (any case) queues nothing",
    (action) => {
      const own = { ...event(action, "backlog"), sender: "Conveyor", issue: { author: "conveyor" } };
      expect(queuer(own, "backlog", "conveyor")).toBeNull();
    },
  );

  it("only an issue outside the lifecycle needs a writer's text to enter it", () => {
    expect([undefined, "new", "blocked", "queued"].map(needsWriter)).toEqual([true, true, false, false]);
  });
});
