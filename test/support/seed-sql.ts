/** SQL that seeds the local D1 directly (`startLocalWorker({ seedSql })`), for dashboards with data to show. */
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

type Value = string | number | null;

const literal = (value: Value) =>
  value === null ? "NULL" : typeof value === "number" ? String(value) : `'${value.replace(/'/g, "''")}'`;

/** INSERTs of `rows` (which share their keys), a few hundred rows per statement. */
export function insertRows(table: string, rows: Record<string, Value>[], chunk = 500): string[] {
  const columns = Object.keys(rows[0] ?? {});
  const statements: string[] = [];
  for (let i = 0; i < rows.length; i += chunk) {
    const values = rows
      .slice(i, i + chunk)
      .map((row) => `(${columns.map((c) => literal(row[c] ?? null)).join(", ")})`);
    statements.push(`INSERT INTO ${table} (${columns.join(", ")}) VALUES\n${values.join(",\n")};`);
  }
  return statements;
}

/** An `issues` row and its forge title, as an IssueDO flush and the issue mirror would have written them. */
export function issueRows(project: string, number: number, state: string, updatedAt: number, title: string) {
  return {
    issue: { project_id: project, number, state, iteration: 1, seq: 1, updated_at: updatedAt },
    forge: {
      project_id: project,
      number,
      title,
      body: "",
      state: "open",
      labels: "[]",
      depends_on: "[]",
      updated_at: updatedAt,
    },
  };
}

export async function writeSeed(name: string, statements: string[]): Promise<string> {
  const file = join(tmpdir(), `conveyor-seed-${name}-${process.pid}.sql`);
  await writeFile(file, `${statements.join("\n")}\n`);
  return file;
}
