/**
 * Columns added to an object's table after it was first created: objects created before them gain them here.
 * Run before the schema's indexes, which may name an added column; a table not created yet gets every column
 * from the schema itself.
 */
export function addColumns(sql: SqlStorage, table: string, columns: Record<string, string>): void {
  const have = new Set(
    sql
      .exec<{ name: string }>(`PRAGMA table_info(${table})`)
      .toArray()
      .map((c) => c.name),
  );
  if (have.size === 0) return;
  for (const [name, type] of Object.entries(columns)) {
    if (!have.has(name)) sql.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`);
  }
}
