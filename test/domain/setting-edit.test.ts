import { describe, expect, it } from "vitest";
import { settingsSchema } from "../../src/projects/config.ts";
import { editSetting, settingKeys } from "../../src/projects/setting-edit.ts";

const defaults = settingsSchema.parse({});

describe("editSetting", () => {
  it.each([
    ["parallel", "4", { parallel: 4 }],
    ["parallel", 7, { parallel: 7 }],
    ["defaultBranch", "123", { defaultBranch: "123" }],
    ["defaultBranch", "trunk", { defaultBranch: "trunk" }],
    ["jobs.leaseMs", "120000", { jobs: { ...defaults.jobs, leaseMs: 120_000 } }],
    ["ci.kind", "github-actions", { ci: { ...defaults.ci, kind: "github-actions" } }],
    ["protectedPaths", '[".ci/**"]', { protectedPaths: [".ci/**"] }],
    ["sandbox.projectSettings", "true", { sandbox: { ...defaults.sandbox, projectSettings: true } }],
    ["labels", '{"backlog":"todo"}', { labels: { ...defaults.labels, backlog: "todo" } }],
    ["critic.runsOn", "runner", { critic: { ...defaults.critic, runsOn: "runner" } }],
    [
      "links.allow",
      '["docs.example.com","*.cdn.example.com"]',
      { links: { allow: ["docs.example.com", "*.cdn.example.com"] } },
    ],
    [
      "mentions.allow",
      '["alice","acme/reviewers"]',
      { mentions: { ...defaults.mentions, allow: ["alice", "acme/reviewers"] } },
    ],
    ["mentions.issueAuthor", "true", { mentions: { ...defaults.mentions, issueAuthor: true } }],
    [
      "critic.reviewHumanPullRequests",
      "true",
      { critic: { ...defaults.critic, reviewHumanPullRequests: true } },
    ],
  ])("%s = %j", (key, value, changed) => {
    expect(editSetting(defaults, key, value)).toEqual({ ok: true, settings: { ...defaults, ...changed } });
  });

  it("null clears an optional setting and restores a default", () => {
    const withUrl = editSetting(defaults, "ci.woodpeckerUrl", "https://ci.example.com");
    expect(withUrl).toMatchObject({
      ok: true,
      settings: { ci: { woodpeckerUrl: "https://ci.example.com" } },
    });
    if (!withUrl.ok) return;
    const cleared = editSetting(withUrl.settings, "ci.woodpeckerUrl", "null");
    expect(cleared).toEqual({ ok: true, settings: defaults });
    expect(editSetting({ ...defaults, parallel: 9 }, "parallel", "null")).toEqual({
      ok: true,
      settings: defaults,
    });
  });

  it("the former timeouts.approval is no setting: refused when edited, dropped from a stored project", () => {
    expect(editSetting(defaults, "timeouts.approval", "1000")).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^unknown setting timeouts\.approval; /),
    });
    const stored = settingsSchema.parse({ timeouts: { approval: 3_600_000, ci: 60_000 } });
    expect(stored.timeouts).toEqual({ ...defaults.timeouts, ci: 60_000 });
  });

  it("keeps the other settings as they were", () => {
    const tuned = { ...defaults, parallel: 5, maxCiFixes: 1 };
    expect(editSetting(tuned, "maxCiFixes", "2")).toEqual({
      ok: true,
      settings: { ...tuned, maxCiFixes: 2 },
    });
  });

  it.each([
    ["parallel", "0", /^parallel: /],
    ["parallel", "four", /^parallel: /],
    ["ci.kind", "jenkins", /^ci\.kind: /],
    ["jobs.leaseMs", "5", /^jobs\.leaseMs: /],
    ["protectedPaths", "[1]", /^protectedPaths\.0: /],
    ["paralel", "4", /^unknown setting paralel; settings are defaultBranch, labels, labels\.backlog/],
    ["jobs.lease", "4", /^unknown setting jobs\.lease;/],
    ["parallel.x", "4", /^unknown setting parallel\.x;/],
    ["forgeToken", "x", /^forgeToken is part of the project's registration, not a setting/],
    ["repo", "a/b", /^repo is part of the project's registration/],
    ["critic.runsOn", "laptop", /runsOn/],
    ["links.allow", '["https://evil.example"]', /^links\.allow\.0: .*host name/],
    ["mentions.allow", '["@alice"]', /^mentions\.allow\.0: .*a login, or a team/],
  ])("refuses %s = %j", (key, value, reason) => {
    const edit = editSetting(defaults, key, value);
    expect(edit.ok).toBe(false);
    if (!edit.ok) expect(edit.reason).toMatch(reason);
  });

  it("lists every leaf and object of the schema as a key", () => {
    expect(settingKeys()).toEqual(
      expect.arrayContaining([
        "parallel",
        "jobs",
        "jobs.maxAttempts",
        "ci.woodpeckerUrl",
        "sandbox.allowedDomains",
      ]),
    );
    expect(settingKeys()).not.toContain("forgeToken");
  });
});
