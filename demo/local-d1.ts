/**
 * Read-only access to the local Worker's D1 database: the SQLite file wrangler persists under its state
 * directory. The demo reads the record the Worker itself keeps (every edge, every cost) without loading it.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { z } from "zod";

const transitionRow = z.object({
  rowid: z.number(),
  number: z.number(),
  seq: z.number(),
  from: z.string(),
  to: z.string(),
  event: z.string(),
  cause: z.string(),
  reason: z.string().nullable(),
  at: z.number(),
});
export type Transition = z.infer<typeof transitionRow>;

const issueRow = z.object({
  number: z.number(),
  state: z.string(),
  iteration: z.number(),
  branch: z.string().nullable(),
  headSha: z.string().nullable(),
  sessionId: z.string().nullable(),
  prNumber: z.number().nullable(),
  reason: z.string().nullable(),
});
export type IssueRow = z.infer<typeof issueRow>;

const costRow = z.object({ number: z.number(), usd: z.number() });

export class LocalD1 {
  readonly #db: DatabaseSync;

  constructor(workerStateDir: string) {
    const dir = join(workerStateDir, "v3", "d1", "miniflare-D1DatabaseObject");
    const file = readdirSync(dir).find((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite");
    if (!file) throw new Error(`no D1 database in ${dir}`);
    this.#db = new DatabaseSync(join(dir, file), { readOnly: true });
  }

  /** Applied edges of the project's issues recorded after `rowid`, oldest first. */
  transitionsAfter(project: string, rowid: number): Transition[] {
    const rows = this.#db
      .prepare(
        `SELECT rowid, number, seq, from_state AS "from", to_state AS "to", event, cause_kind AS cause, reason, at
         FROM transitions WHERE project_id = ? AND outcome = 'applied' AND rowid > ? ORDER BY rowid`,
      )
      .all(project, rowid);
    return z.array(transitionRow).parse(rows);
  }

  issues(project: string): IssueRow[] {
    const rows = this.#db
      .prepare(
        `SELECT number, state, iteration, branch, head_sha AS headSha, session_id AS sessionId, pr_number AS prNumber, reason
         FROM issues WHERE project_id = ? ORDER BY number`,
      )
      .all(project);
    return z.array(issueRow).parse(rows);
  }

  /** The numbers of the project's open issues in Conveyor's mirror of the forge. */
  openMirrored(project: string): number[] {
    const rows = this.#db
      .prepare("SELECT number FROM forge_issues WHERE project_id = ? AND state = 'open' ORDER BY number")
      .all(project);
    return z
      .array(z.object({ number: z.number() }))
      .parse(rows)
      .map((row) => row.number);
  }

  /** The issue's title in Conveyor's mirror of the forge, if it has it. */
  title(project: string, number: number): string | undefined {
    const row = this.#db
      .prepare("SELECT title FROM forge_issues WHERE project_id = ? AND number = ?")
      .get(project, number);
    return row === undefined ? undefined : z.object({ title: z.string() }).parse(row).title;
  }

  /** USD spent per issue, over all its sessions. */
  costs(project: string): Map<number, number> {
    const rows = this.#db
      .prepare("SELECT number, SUM(usd) AS usd FROM usage WHERE project_id = ? GROUP BY number")
      .all(project);
    return new Map(
      z
        .array(costRow)
        .parse(rows)
        .map((row) => [row.number, row.usd]),
    );
  }

  close(): void {
    this.#db.close();
  }
}
