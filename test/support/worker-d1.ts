/**
 * A local Worker's D1, migrated the way `npm run dev` migrates it (`wrangler d1 migrations apply`), once per
 * set of migrations rather than once per Worker: each apply starts wrangler and a workerd (seconds of CPU, tens
 * of seconds on a loaded machine), and a test run starts dozens of Workers. The first apply's state is kept
 * under node_modules/.cache, keyed by the migrations and the D1 binding; a fresh state directory starts as a
 * copy of it. A state directory that already holds a D1 (a restart, a kept demo) is migrated in place.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;
const CACHE = join(ROOT, "node_modules/.cache/conveyor-d1");

/** `apply(dir)`: `wrangler d1 migrations apply` with `--persist-to dir`. */
export async function migratedD1(stateDir: string, apply: (dir: string) => Promise<unknown>): Promise<void> {
  if (existsSync(join(stateDir, "v3", "d1"))) {
    await apply(stateDir);
    return;
  }
  const template = join(CACHE, await migrationsKey());
  if (!existsSync(template)) {
    await mkdir(CACHE, { recursive: true });
    const building = await mkdtemp(join(CACHE, "building-"));
    await apply(building);
    // Another process may have built it meanwhile: the first rename wins, the same content either way.
    await rename(building, template).catch(() => rm(building, { recursive: true, force: true }));
  }
  await cp(template, stateDir, { recursive: true });
}

/** What the migrated database depends on: each migration's name and text, and the D1 binding's config. */
async function migrationsKey(): Promise<string> {
  const hash = createHash("sha256");
  const dir = join(ROOT, "migrations");
  for (const name of (await readdir(dir, { recursive: true })).filter((n) => n.endsWith(".sql")).sort()) {
    hash.update(name).update(await readFile(join(dir, name)));
  }
  hash.update(await readFile(join(ROOT, "wrangler.toml")));
  return hash.digest("hex").slice(0, 16);
}
