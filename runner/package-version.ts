/**
 * The version of the installed Conveyor package, for `--version` and what a runner reports: read from the
 * nearest package.json named `conveyor` above this file, whether it runs from the repository (runner/, cli/)
 * or compiled in the package (dist/runner/, dist/cli/).
 */
import { readFileSync } from "node:fs";

export function packageVersion(from: string | URL = import.meta.url): string {
  let dir = new URL(".", from);
  for (;;) {
    const file = new URL("package.json", dir);
    let text: string | undefined;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    if (text !== undefined) {
      const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
      if (pkg.name === "conveyor" && typeof pkg.version === "string") return pkg.version;
    }
    const parent = new URL("..", dir);
    if (parent.href === dir.href) throw new Error(`no conveyor package.json above ${new URL(from).pathname}`);
    dir = parent;
  }
}
