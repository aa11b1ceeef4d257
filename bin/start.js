/**
 * What both bins do before anything else. They are plain JavaScript that any Node parses, so that on a Node
 * older than the package's `engines` they refuse in one line instead of failing somewhere inside. Then they
 * run the TypeScript source where it is (a clone of the repository: no build step) or else the compiled
 * JavaScript the npm package carries in dist/ (Node strips no types under node_modules).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { constants } from "node:os";
import { fileURLToPath } from "node:url";

const root = new URL("../", import.meta.url);

/** `engines.node` of the package (">=22.12"), as [major, minor]. */
function required() {
  const { engines } = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
  const match = /^>=\s*(\d+)\.(\d+)/.exec(engines?.node ?? "");
  if (!match) throw new Error(`package.json: engines.node is not ">=major.minor": ${engines?.node}`);
  return [Number(match[1]), Number(match[2])];
}

/** [major, minor] >= [major, minor]. */
const atLeast = (version, [major, minor]) =>
  version[0] > major || (version[0] === major && version[1] >= minor);

/** Runs `entry` (`cli/conveyor`) as the bin `name`, with the process's arguments. */
export async function start(name, entry) {
  const node = process.versions.node.split(".").map(Number);
  const needed = required();
  if (!atLeast(node, needed)) {
    process.stderr.write(
      `${name}: needs Node >= ${needed.join(".")}, but ${process.execPath} is Node ${process.versions.node}\n`,
    );
    process.exitCode = 2;
    return;
  }
  const source = new URL(`${entry}.ts`, root);
  if (!existsSync(source)) {
    await import(new URL(`dist/${entry}.js`, root).href);
    return;
  }
  // Node strips types by default from 22.18; 22.12 to 22.17 need the flag, in a process of their own.
  if (process.features.typescript) {
    await import(source.href);
    return;
  }
  const flags = ["--experimental-strip-types", "--disable-warning=ExperimentalWarning"];
  const child = spawn(process.execPath, [...flags, fileURLToPath(source), ...process.argv.slice(2)], {
    stdio: "inherit",
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  const [code, signal] = await new Promise((resolve) => child.on("exit", (...end) => resolve(end)));
  process.exitCode = code ?? 128 + (constants.signals[signal] ?? 0);
}
