/** Which files a diff touches, and which of them need a human's approval before a merge. Pure. */
import { minimatch } from "minimatch";

/** CI configuration, workflows and lockfiles: changes an agent must not merge on its own. */
export const DEFAULT_PROTECTED_PATHS = [
  ".github/workflows/**",
  ".github/actions/**",
  ".woodpecker*",
  ".woodpecker/**",
  ".forgejo/workflows/**",
  ".gitea/workflows/**",
  ".gitlab-ci.yml",
  ".ci/**",
  "**/package-lock.json",
  "**/npm-shrinkwrap.json",
  "**/yarn.lock",
  "**/pnpm-lock.yaml",
  "**/bun.lockb",
  "**/Cargo.lock",
  "**/go.sum",
  "**/poetry.lock",
  "**/Gemfile.lock",
  "**/composer.lock",
];

/** Paths on both sides of every `diff --git` header (a rename touches both), in order, once each. */
export function changedFiles(diff: string): string[] {
  const files = new Set<string>();
  for (const line of diff.split(/\r?\n/)) {
    // `--- a/x` / `+++ b/y` name both sides unambiguously, even for paths with spaces.
    const side = /^(?:---|\+\+\+) [ab]\/(.+?)\t?$/.exec(line);
    if (side?.[1]) files.add(side[1]);
    const rename = /^rename (?:from|to) (.+)$/.exec(line);
    if (rename?.[1]) files.add(rename[1]);
  }
  return [...files];
}

export function protectedFiles(files: readonly string[], globs: readonly string[]): string[] {
  return files.filter((file) => globs.some((glob) => minimatch(file, glob, { dot: true })));
}
