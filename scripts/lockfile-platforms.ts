/**
 * Completes package-lock.json with the other platforms' optional binaries (workerd, biome, …).
 *
 * The registry reachable here serves only this platform's binaries, so `npm install` leaves the others out
 * of the lock, and `npm ci` then refuses the lock as out of sync. An entry with `os`/`cpu` lets npm ci skip
 * the package on platforms it does not fit and fetch it on those it does. Run after every `npm install`.
 */
import { readFileSync, writeFileSync } from "node:fs";

type Entry = {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  optionalDependencies?: Record<string, string>;
};
const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8")) as {
  packages: Record<string, Entry & Record<string, unknown>>;
};
const packages = lock.packages;

function platform(name: string): Record<string, string[]> {
  const os = /android/.test(name)
    ? "android"
    : /darwin/.test(name)
      ? "darwin"
      : /win32|windows/.test(name)
        ? "win32"
        : /linux/.test(name)
          ? "linux"
          : null;
  const cpu = /arm64/.test(name) ? "arm64" : /x64|-64$/.test(name) ? "x64" : null;
  return {
    ...(os ? { os: [os] } : {}),
    ...(cpu ? { cpu: [cpu] } : {}),
    ...(/musl/.test(name) ? { libc: ["musl"] } : {}),
  };
}

/** What npm finds for `dep` required by the package at `parent`: nested first, then each ancestor. */
function resolve(parent: string, dep: string): Entry | undefined {
  for (let dir = parent; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf("/node_modules/")))) {
    const found = packages[`${dir ? `${dir}/` : ""}node_modules/${dep}`];
    if (found || !dir) return found;
  }
}

let added = 0;
for (const [parent, entry] of Object.entries(packages)) {
  for (const [dep, wanted] of Object.entries(entry.optionalDependencies ?? {})) {
    // A range's lowest version satisfies it (`~2.3.3` → 2.3.3); the lock needs a concrete one.
    const version = wanted.replace(/^[~^=]/, "");
    const found = resolve(parent, dep);
    if (found?.version === version) continue;
    const at = found ? `${parent}/node_modules/${dep}` : `node_modules/${dep}`;
    packages[at] = { version, ...(entry.dev ? { dev: true } : {}), optional: true, ...platform(dep) };
    added++;
  }
}
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} platform entries added`);
