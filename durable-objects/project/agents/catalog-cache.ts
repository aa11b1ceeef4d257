/**
 * The ProjectDO's copy of its agent catalog, so a webhook does not read `.conveyor/agents/` from the forge:
 * read again when older than a few minutes, or at once after a push to the default branch touched the
 * directory. A read that fails keeps the copy it has (a stale catalog beats none while the forge is down).
 */
import type { Catalog } from "../../../src/agents/catalog.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS agent_catalog (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  catalog TEXT NOT NULL,
  read_at INTEGER NOT NULL
);
`;

/** A copy older than this is read again before use. */
export const CATALOG_TTL_MS = 5 * 60_000;

export class AgentCatalogCache {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  /** The catalog: the copy when fresh, else `read` (kept); the stale copy when `read` fails, if there is one. */
  async get(read: () => Promise<Catalog>, now: number): Promise<Catalog> {
    const row = this.sql
      .exec<{ catalog: string; read_at: number }>("SELECT catalog, read_at FROM agent_catalog WHERE id = 1")
      .toArray()[0];
    if (row && now - row.read_at < CATALOG_TTL_MS) return JSON.parse(row.catalog) as Catalog;
    try {
      const catalog = await read();
      this.put(catalog, now);
      return catalog;
    } catch (error) {
      if (row) return JSON.parse(row.catalog) as Catalog;
      throw error;
    }
  }

  /** A catalog just read (the schedules' check reads it too). */
  put(catalog: Catalog, now: number): void {
    this.sql.exec(
      `INSERT INTO agent_catalog (id, catalog, read_at) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET catalog = excluded.catalog, read_at = excluded.read_at`,
      JSON.stringify(catalog),
      now,
    );
  }

  /** The definitions changed on the default branch: the next use reads them again. */
  forget(): void {
    this.sql.exec("DELETE FROM agent_catalog");
  }
}
