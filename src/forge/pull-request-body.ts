/**
 * The description of the pull request Conveyor opens for an issue: what the session says it changed, and how
 * CI and the critic went, rewritten with each push so that a maintainer reads the story in one place.
 */

export type PullRequestStory = {
  number: number;
  branch: string;
  /** The latest session's closing words; agent output, shown as a quote. */
  summary: string | null;
  /** Each CI verdict Conveyor acted on, oldest first. */
  ci: { green: boolean }[];
  /** Each critic report, oldest first. */
  critic: { round: number; verdict: string; summary: string }[];
};

export const MAX_SUMMARY_CHARS = 4_000;

export function pullRequestBody(story: PullRequestStory): string {
  const lines = [`Closes #${story.number}`, "", "## What changed", ""];
  lines.push(story.summary ? quote(story.summary) : "_The session left no summary; the commits tell._");
  const history = [
    ...(story.ci.length > 0
      ? [`- CI: ${story.ci.map((run) => (run.green ? "green" : "red")).join(" → ")}`]
      : []),
    ...story.critic.map((r) => `- Critic, round ${r.round}: ${r.verdict}. ${quoteInline(r.summary)}`),
  ];
  if (history.length > 0) lines.push("", "## How it went", "", ...history);
  lines.push(
    "",
    `_Opened by Conveyor from \`${story.branch}\`; this description is rewritten with each push._`,
  );
  return lines.join("\n");
}

/**
 * Agent and critic text is shown, not obeyed: quoted line by line, cut to size, and with `@` broken so that
 * it mentions nobody (a session must not page a team).
 */
function quote(text: string): string {
  const cut = text.length > MAX_SUMMARY_CHARS ? `${text.slice(0, MAX_SUMMARY_CHARS - 1)}…` : text;
  return defuse(cut)
    .split("\n")
    .map((line) => `> ${line}`.trimEnd())
    .join("\n");
}

const quoteInline = (text: string) => defuse(text.replace(/\s+/g, " ").trim().slice(0, 300));

const defuse = (text: string) => text.replaceAll("@", "@\u200b");
