/**
 * The files a formula step's command runs, as a vault approval binds them: the command's words that are plain
 * relative paths (`./scripts/rotate.sh`, `tools/x.py`, `rotate.sh`) and name a regular file of the repository at
 * the formula's commit, each with its git blob id. The Worker reads them through the forge when it asks the
 * vault (src/formulas/load.ts); the runner reads them in its private repository at the job's commit before the
 * approved step runs, and refuses when they differ (runner/actions/action-tools.ts). Pure.
 *
 * What those files read in turn (a sourced library, package.json under `npm run`) is bound by the commit only:
 * a dangerous step names what it runs.
 */
import { z } from "zod";

/** path → git blob id, of the regular files (not links, not submodules) the command names. */
export type StepFiles = Record<string, string>;

/** A command names few files; past this many words that look like paths, the rest are not looked up. */
export const MAX_COMMAND_PATHS = 20;

/** A git object id: SHA-1, or SHA-256 in a repository that uses it. */
export const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

export const stepFilesSchema = z
  .record(z.string().max(300), z.string().regex(OBJECT_ID))
  .refine((files) => Object.keys(files).length <= MAX_COMMAND_PATHS, "too many files");

/** A relative path of plain segments: no `..`, no `.` but a leading `./`, no option, no glob or variable. */
const SEGMENT = "[A-Za-z0-9_@+][A-Za-z0-9._@+-]*";
const PATH = new RegExp(`^(?:\\./)*(${SEGMENT}(?:/${SEGMENT})*)$`);
/** Shell words: split at blanks and operators; quotes around a word are not part of it. */
const SEPARATORS = /[\s;|&()<>`]+/;

/** The repository paths a command's words may name, `./` dropped, in order, each once. */
export function commandPaths(command: string): string[] {
  const paths = new Set<string>();
  for (const raw of command.split(SEPARATORS)) {
    const word = raw.replace(/^(["'])(.*)\1$/, "$2");
    const path = PATH.exec(word)?.[1];
    // A bare word without a dot or a slash is a program on PATH or an argument, not a file of the repository.
    if (!path || !/[./]/.test(word) || path.split("/").some((s) => s === "." || s === "..")) continue;
    paths.add(path);
    if (paths.size === MAX_COMMAND_PATHS) break;
  }
  return [...paths];
}

/**
 * Null when `current` (the files at the commit the step is about to run from) are the ones the vault
 * approved; otherwise what differs, in one line.
 */
export function filesChanged(approved: StepFiles, current: StepFiles, approvedCommit: string): string | null {
  const paths = [...new Set([...Object.keys(approved), ...Object.keys(current)])].sort();
  const changes = paths.flatMap((path) => {
    const was = approved[path];
    const is = current[path];
    if (was === is) return [];
    if (was === undefined) return [`${path} is new`];
    if (is === undefined) return [`${path} is gone`];
    return [`${path} changed`];
  });
  if (changes.length === 0) return null;
  return `${changes.join(", ")} since the vault approved it at commit ${approvedCommit.slice(0, 12)}`;
}
