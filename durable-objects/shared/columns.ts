/** Columns added to an object's table after it was first created: objects created before them gain them here. */
export function addColumns(sql: SqlStorage, table: string, columns: Record<string, string>): void {
  const have = new Set(
    sql
      .exec<{ name: string }>(`PRAGMA table_info(${table})`)
      .toArray()
      .map((c) => c.name),
  );
  for (const [name, type] of Object.entries(columns)) {
    if (!have.has(name)) sql.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`);
  }
}
