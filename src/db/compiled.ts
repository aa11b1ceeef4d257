/**
 * A drizzle query compiled once, with named placeholders, then bound per call as a plain D1 statement.
 * Drizzle builds a query's SQL anew on every call: a quarter of the Worker's JavaScript time on the webhook
 * path in an inspector profile (docs/performance.md). Rows come back as D1 gives them, keyed by column
 * name, without drizzle's mapping: select only columns whose names are the keys you read.
 */
import { fillPlaceholders, is, type Query, SQL } from "drizzle-orm";
import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";

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

/** The rows of one result of `D1Database.batch`. */
export const rowsOf = <T>(result: D1Result | undefined): T[] => (result?.results ?? []) as T[];
