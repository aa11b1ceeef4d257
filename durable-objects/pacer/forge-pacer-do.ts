/**
 * The pacer of one forge token (named by a hash of the API URL and the token, never the token): the writes
 * every holder of the token made lately, and the forge's last "wait until". Each call is one synchronous
 * read-decide-write of its SQLite row, so concurrent writers are counted one after the other.
 */
import { DurableObject } from "cloudflare:workers";
import type { PacerAnswer, PacerObject } from "../../src/contracts/pacer-object.ts";
import {
  blockUntil,
  FRESH,
  type PacingLimits,
  type PacingState,
  paceWrite,
  type WriteKind,
} from "../../src/domain/forge-pacing.ts";
import type { Env } from "../../src/env.ts";

const SCHEMA =
  "CREATE TABLE IF NOT EXISTS pacing (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL)";

export class ForgePacerDO extends DurableObject<Env> implements PacerObject {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(SCHEMA);
  }

  async acquire(kind: WriteKind, limits: PacingLimits, maxWaitMs: number): Promise<PacerAnswer> {
    const grant = paceWrite(this.read(), kind, Date.now(), limits, maxWaitMs);
    this.write(grant.state);
    return grant.go ? { at: grant.at } : { retryAt: grant.retryAt };
  }

  async block(until: number): Promise<void> {
    this.write(blockUntil(this.read(), until));
  }

  async blockedUntil(): Promise<number> {
    const until = this.read().blockedUntil;
    return until > Date.now() ? until : 0;
  }

  private read(): PacingState {
    const [row] = this.sql.exec<{ state: string }>("SELECT state FROM pacing WHERE id = 1").toArray();
    return row ? (JSON.parse(row.state) as PacingState) : FRESH;
  }

  private write(state: PacingState): void {
    this.sql.exec(
      "INSERT INTO pacing (id, state) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET state = excluded.state",
      JSON.stringify(state),
    );
  }
}
