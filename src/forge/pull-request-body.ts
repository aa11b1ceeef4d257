/**
 * The description of the pull request Conveyor opens for an issue: what the session says it changed, and how
 * CI and the critic went, rewritten with each push so that a maintainer reads the story in one place. The
 * session's and the critic's words are quoted apart and defused (src/forge/post); "Closes #n" is Conveyor's.
 */
import type { PostPolicy } from "./post/policy.ts";
import { composePost, type Piece, type PostBody } from "./post/post.ts";

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

/** A summary past this is cut: the description is a story, not a log. */
export const MAX_SUMMARY_CHARS = 4_000;
const MAX_CRITIC_CHARS = 600;

export function pullRequestBody(story: PullRequestStory, policy: PostPolicy): PostBody {
  const pieces: Piece[] = [
    { conveyor: `Closes #${story.number}\n\n## What changed` },
    story.summary
      ? { quote: cut(story.summary, MAX_SUMMARY_CHARS), by: "The session wrote:" }
      : { conveyor: "_The session left no summary; the commits tell._" },
  ];
  if (story.ci.length > 0 || story.critic.length > 0) pieces.push({ conveyor: "## How it went" });
  if (story.ci.length > 0)
    pieces.push({ conveyor: `- CI: ${story.ci.map((run) => (run.green ? "green" : "red")).join(" → ")}` });
  for (const r of story.critic)
    pieces.push({ quote: cut(r.summary, MAX_CRITIC_CHARS), by: `Critic, round ${r.round}: ${r.verdict}.` });
  pieces.push({
    conveyor: `_Opened by Conveyor from \`${story.branch}\`; this description is rewritten with each push._`,
  });
  return composePost(policy, pieces);
}

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
