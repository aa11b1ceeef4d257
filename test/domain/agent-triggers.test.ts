import { describe, expect, it } from "vitest";
import { BUILTIN_AGENTS } from "../../src/agents/builtin.generated.ts";
import { agentCatalog } from "../../src/agents/catalog.ts";
import { agentPrompt } from "../../src/agents/context.ts";
import { withDependency } from "../../src/agents/link-dependency.ts";
import { pushTouchesAgents } from "../../src/agents/push.ts";
import { agentTriggerOf, triggeredAgents, triggerText } from "../../src/agents/triggers.ts";
import { parseDependencies } from "../../src/domain/dependencies.ts";
import type {
  CommentEvent,
  ForgeEvent,
  IssueEvent,
  PullRequestEvent,
} from "../../src/forge/webhooks/events.ts";

const origin = { forge: "github" as const, repository: "acme/app", sender: "alice" };
const issue = (action: IssueEvent["action"]): IssueEvent => ({
  ...origin,
  type: "issue",
  action,
  issue: { number: 7, title: "Crash", body: "It <crashes>.", state: "open", labels: ["bug"], author: "bob" },
  label: null,
});
const pull = (action: PullRequestEvent["action"]): PullRequestEvent => ({
  ...origin,
  type: "pull_request",
  action,
  pullRequest: {
    number: 9,
    title: "Fix",
    body: "Fixes it.",
    headRef: "fix",
    headSha: "abc",
    headRepository: "acme/app",
    baseRef: "main",
    merged: false,
    author: "carol",
    labels: [],
    state: "open",
    createdAt: null,
    updatedAt: null,
    closedAt: null,
  },
  label: null,
});
const comment = (action: CommentEvent["action"]): CommentEvent => ({
  ...origin,
  type: "comment",
  action,
  comment: { issueNumber: 7, isPullRequest: false, commentId: 1, body: "Any news?", author: "dave" },
});

describe("agentTriggerOf", () => {
  it("names the five events an agent's `on` can list, with the issue, pull request or comment", () => {
    expect(agentTriggerOf(issue("opened"))).toEqual({
      event: "issues.opened",
      number: 7,
      sender: "alice",
      subject: {
        kind: "issue",
        number: 7,
        title: "Crash",
        body: "It <crashes>.",
        labels: ["bug"],
        author: "bob",
      },
    });
    expect(agentTriggerOf(issue("labeled"))?.event).toBe("issues.labeled");
    // Gitea/Forgejo: a label change that leaves the issue labelled.
    expect(agentTriggerOf(issue("labels_updated"))?.event).toBe("issues.labeled");
    expect(agentTriggerOf(pull("opened"))).toMatchObject({
      event: "pull_request.opened",
      number: 9,
      subject: { kind: "pull_request", title: "Fix", author: "carol" },
    });
    expect(agentTriggerOf(pull("synchronized"))?.event).toBe("pull_request.synchronize");
    expect(agentTriggerOf(comment("created"))).toMatchObject({
      event: "issue_comment.created",
      number: 7,
      subject: { kind: "comment", isPullRequest: false, body: "Any news?", author: "dave" },
    });
  });

  it("is null for every other event", () => {
    const others: ForgeEvent[] = [
      issue("closed"),
      issue("edited"),
      issue("unlabeled"),
      { ...issue("labels_updated"), issue: { ...issue("opened").issue, labels: [] } },
      issue("reopened"),
      pull("closed"),
      pull("merged"),
      pull("edited"),
      pull("reopened"),
      comment("edited"),
      comment("deleted"),
      {
        ...origin,
        type: "review",
        review: { pullNumber: 9, reviewId: 1, state: "approved", body: "", author: "x", headSha: "abc" },
      },
    ];
    for (const event of others) expect(agentTriggerOf(event)).toBeNull();
  });

  it("reads as the event and the number", () => {
    expect(triggerText({ event: "issues.opened", number: 7 })).toBe("issues.opened #7");
  });
});

describe("triggeredAgents", () => {
  const file = (on: string, enabled = true) =>
    `---\ndescription: x\non: [${on}]\nenabled: ${enabled}\noutputs:\n  comment: { max: 1 }\n---\nGo.\n`;
  const catalog = agentCatalog(
    BUILTIN_AGENTS,
    new Map([
      [".conveyor/agents/welcomer.md", file("issues.opened, issues.labeled")],
      [".conveyor/agents/off.md", file("issues.opened", false)],
      [".conveyor/agents/pulls.md", file("pull_request.opened")],
    ]),
  );

  it("starts the enabled repository agents whose `on` lists the event", () => {
    expect(triggeredAgents(catalog, "issues.opened").map((a) => a.name)).toEqual(["welcomer"]);
    expect(triggeredAgents(catalog, "issues.labeled").map((a) => a.name)).toEqual(["welcomer"]);
    expect(triggeredAgents(catalog, "issue_comment.created")).toEqual([]);
  });

  it("not a built-in's `on` (the reviewer's), unless the repository overrides it", () => {
    expect(triggeredAgents(catalog, "pull_request.opened").map((a) => a.name)).toEqual(["pulls"]);
    expect(triggeredAgents(catalog, "pull_request.synchronize")).toEqual([]);
    const overridden = agentCatalog(
      BUILTIN_AGENTS,
      new Map([[".conveyor/agents/reviewer.md", file("pull_request.synchronize")]]),
    );
    expect(triggeredAgents(overridden, "pull_request.synchronize").map((a) => a.name)).toEqual(["reviewer"]);
  });

  it("a built-in's `on` where the project turned it on (the reviewer, for people's pull requests)", () => {
    const names = (event: "pull_request.opened" | "pull_request.synchronize" | "issues.opened") =>
      triggeredAgents(catalog, event, ["reviewer"]).map((a) => a.name);
    expect(names("pull_request.opened")).toEqual(["pulls", "reviewer"]);
    expect(names("pull_request.synchronize")).toEqual(["reviewer"]);
    expect(names("issues.opened")).toEqual(["welcomer"]);
    const disabled = agentCatalog(
      BUILTIN_AGENTS,
      new Map([[".conveyor/agents/reviewer.md", file("issues.opened", false)]]),
    );
    expect(triggeredAgents(disabled, "pull_request.opened", ["reviewer"])).toEqual([]);
  });
});

describe("an event's run prompt", () => {
  it("carries the event's subject as escaped data", () => {
    const subject = agentTriggerOf(issue("opened"))?.subject;
    const prompt = agentPrompt(
      { prompt: "Welcome." },
      {
        project: "p",
        repo: "acme/app",
        trigger: "issues.opened #7",
        issues: [],
        ...(subject && { subject }),
      },
    );
    expect(prompt).toContain("Trigger: issues.opened #7.");
    expect(prompt).toContain("<event>");
    expect(prompt).toContain("It &lt;crashes&gt;.");
    expect(prompt).not.toContain("It <crashes>.");
  });
});

describe("withDependency", () => {
  it("appends a `Depends on #N` line the dependency parser reads", () => {
    const linked = withDependency("Do it.\n\n", 4);
    expect(linked).toBe("Do it.\n\nDepends on #4\n");
    expect(parseDependencies(linked ?? "")).toEqual([{ repo: null, number: 4 }]);
    expect(withDependency("", 4)).toBe("Depends on #4\n");
  });

  it("keeps a body that already declares it, in any form the parser reads", () => {
    expect(withDependency("Blocked by #4", 4)).toBe("Blocked by #4");
    const section = "## Dependencies\n- #2\n- #4\n";
    expect(withDependency(section, 4)).toBe(section);
  });

  it("adds it when the body only mentions it or names another repository's #N", () => {
    expect(withDependency("See #4.", 4)).toBe("See #4.\n\nDepends on #4\n");
    expect(withDependency("Depends on other/repo#4", 4)).toBe("Depends on other/repo#4\n\nDepends on #4\n");
    expect(withDependency("```\nDepends on #4\n```", 4)).toBe("```\nDepends on #4\n```\n\nDepends on #4\n");
  });

  it("is null when the body ends inside an unclosed code fence", () => {
    expect(withDependency("```\ncode", 4)).toBeNull();
  });
});

describe("pushTouchesAgents", () => {
  const project = { repo: "acme/app", defaultBranch: "main" };
  const push = (over: object = {}) => ({
    ref: "refs/heads/main",
    repository: { full_name: "Acme/App" },
    commits: [{ added: [], removed: [], modified: ["README.md"] }],
    ...over,
  });
  const change = (kind: "added" | "removed" | "modified") => ({
    commits: [{ added: [], removed: [], modified: [], [kind]: [".conveyor/agents/x.md"] }],
  });

  it("is a change when a commit on the default branch added, removed or modified an agent file", () => {
    for (const kind of ["added", "removed", "modified"] as const) {
      expect(pushTouchesAgents(project, push(change(kind)))).toBe(true);
    }
    expect(pushTouchesAgents(project, push())).toBe(false);
  });

  it("is a change when the forge cut the commit list short, or sent none", () => {
    expect(pushTouchesAgents(project, push({ total_commits: 9 }))).toBe(true);
    expect(pushTouchesAgents(project, push({ commits: null }))).toBe(true);
    expect(pushTouchesAgents(project, push({ total_commits: 1 }))).toBe(false);
  });

  it("is none for another branch, another repository or a body that is not a push", () => {
    expect(pushTouchesAgents(project, push({ ref: "refs/heads/dev", ...change("added") }))).toBe(false);
    expect(pushTouchesAgents(project, push({ ref: "refs/tags/main", ...change("added") }))).toBe(false);
    const elsewhere = push({ repository: { full_name: "acme/other" }, ...change("added") });
    expect(pushTouchesAgents(project, elsewhere)).toBe(false);
    expect(pushTouchesAgents(project, { zen: "hi" })).toBe(false);
  });
});
