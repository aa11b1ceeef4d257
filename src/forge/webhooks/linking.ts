// Issue numbers are capped at 9 digits so they always fit a safe integer.
const ISSUE_NUMBER = "[1-9]\\d{0,8}";

// Conveyor names its branches `conveyor/<issue>` or `conveyor/<issue>-<slug>`.
const BRANCH = new RegExp(`^conveyor/(${ISSUE_NUMBER})(?:-.*)?$`);

// GitHub's closing keywords, one issue per keyword, optional colon ("Fixes: #3"). Only same-repository
// references (`#N`): `owner/repo#N` names another repository's issue. The lookbehind keeps "prefixes #1"
// and "unfixed #1" out; the lookahead keeps "#12" from matching inside "#123" or "#12abc".
const CLOSING = new RegExp(
  `(?<![\\w-])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?[ \\t]+#(${ISSUE_NUMBER})(?![\\w])`,
  "gi",
);

/** The issue a `conveyor/<n>[-slug]` branch implements, or null for any other branch. */
export function issueFromBranch(ref: string): number | null {
  const match = BRANCH.exec(ref);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/** Issues a pull request body closes with a closing keyword, in order of first mention, without repeats. */
export function closingReferences(body: string): number[] {
  const numbers = [...body.matchAll(CLOSING)].map((match) => Number(match[1]));
  return [...new Set(numbers)];
}

/** Every issue a pull request is linked to, by its branch or its body; ascending, without repeats. */
export function linkedIssues(headRef: string, body: string): number[] {
  const fromBranch = issueFromBranch(headRef);
  const all = new Set(closingReferences(body));
  if (fromBranch !== null) all.add(fromBranch);
  return [...all].sort((a, b) => a - b);
}
