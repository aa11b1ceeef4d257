/** Where a human looks at an issue, a pull request, a commit or a branch on the forge's web site. */
import { type ProjectRegistration, repoWebUrl } from "../projects/config.ts";

export type ForgeLinks = {
  issue(number: number): string;
  pullRequest(number: number): string;
  commit(sha: string): string;
  /** None for a name git refuses (`..`, a part starting with `.`): a URL would climb out of the branch path. */
  branch(name: string): string | undefined;
};

export function forgeLinks(project: Pick<ProjectRegistration, "forge" | "apiUrl" | "repo">): ForgeLinks {
  const repo = repoWebUrl(project.forge, project.apiUrl, project.repo);
  const github = project.forge === "github";
  // Each segment escaped, dot segments too: a URL parser would otherwise climb out of the branch path.
  const segment = (part: string) =>
    /^\.+$/.test(part) ? part.replaceAll(".", "%2E") : encodeURIComponent(part);
  const path = (name: string) => name.split("/").map(segment).join("/");
  return {
    issue: (number) => `${repo}/issues/${number}`,
    pullRequest: (number) => `${repo}/${github ? "pull" : "pulls"}/${number}`,
    commit: (sha) => `${repo}/commit/${encodeURIComponent(sha)}`,
    branch: (name) =>
      name.includes("..") || /(^|\/)\./.test(name)
        ? undefined
        : `${repo}/${github ? "tree" : "src/branch"}/${path(name)}`,
  };
}
