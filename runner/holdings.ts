import { mkdirSync, readdirSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The issues whose worktree (and session transcript) this runner holds, as `issueRef`s: sent with every claim
 * so the Worker prefers this runner for their continuations. Kept on disk, one empty file per issue, so a
 * restarted runner claims with the same affinity.
 */
export class Holdings {
  readonly #dir: string;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.#dir = dir;
  }

  list(): string[] {
    return readdirSync(this.#dir).sort();
  }

  async add(key: string): Promise<void> {
    await writeFile(join(this.#dir, key), "");
  }

  async remove(key: string): Promise<void> {
    await rm(join(this.#dir, key), { force: true });
  }
}
