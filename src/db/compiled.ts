/**
 * A drizzle query compiled once, with named placeholders, then bound per call as a plain D1 statement.
 * Drizzle builds a query's SQL anew on every call: a quarter of the Worker's JavaScript time on the webhook
 * path in an inspector profile (docs/performance.md). Rows come back as D1 gives them, keyed by column
 * name, without drizzle's mapping: select only columns whose names are the keys you read.
 */
import {
  fillPlaceholders,
  getTableColumns,
  type InferInsertModel,
  is,
  type Query,
  SQL,
  sql,
} from "drizzle-orm";
import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import {
  SQLiteAsyncDialect,
  type SQLiteColumn,
  type SQLiteTable,
  type SQLiteUpdateSetSource,
} from "drizzle-orm/sqlite-core";

type Compiled<V extends Record<string, unknown>> = (db: D1Database, values: V) => D1PreparedStatement;

export function compile<V extends Record<string, unknown>>(
  build: (d: DrizzleD1Database) => { toSQL(): Query } | SQL,
): Compiled<V> {
  let query: Query | undefined;
  return (db, values) => {
    if (!query) {
      const built = build(drizzle(db));
      query = is(built, SQL) ? new SQLiteAsyncDialect().sqlToQuery(built) : built.toSQL();
    }
    return db.prepare(query.sql).bind(...fillPlaceholders(query.params, values));
  };
}

/** Every column of `table`'s row, present (a nullable one as null): what a compiled upsert binds. */
export type FullRow<T extends SQLiteTable> = {
  [K in keyof InferInsertModel<T>]-?: Exclude<InferInsertModel<T>[K], undefined>;
};

type Key<T extends SQLiteTable> = keyof FullRow<T> & string;

/**
 * An `INSERT` of a whole row of `table`, compiled once. Without `onConflict` a conflicting row is left as it
 * is; with it, the `update` columns (or all but `except`) take the new row's values where `where` allows.
 */
export function compileUpsert<T extends SQLiteTable>(
  table: T,
  onConflict?: { target: SQLiteColumn[]; update: Key<T>[] | { except: Key<T>[] }; where?: SQL },
): (db: D1Database, row: FullRow<T>) => D1PreparedStatement {
  const columns: Record<string, SQLiteColumn> = getTableColumns(table);
  const keys = Object.keys(columns);
  return compile<FullRow<T>>((d) => {
    const insert = d
      .insert(table)
      .values(Object.fromEntries(keys.map((k) => [k, sql.placeholder(k)])) as never);
    if (!onConflict) return insert.onConflictDoNothing();
    const { target, update, where } = onConflict;
    const updated = Array.isArray(update) ? update : keys.filter((k) => !update.except.includes(k as Key<T>));
    const set = Object.fromEntries(
      updated.map((k) => [k, sql`excluded.${sql.identifier(columns[k]?.name ?? k)}`]),
    ) as SQLiteUpdateSetSource<T>;
    return insert.onConflictDoUpdate({ target, set, ...(where && { setWhere: where }) });
  });
}

/** The rows of one result of `D1Database.batch`. */
export const rowsOf = <T>(result: D1Result | undefined): T[] => (result?.results ?? []) as T[];
