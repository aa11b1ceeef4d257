/**
 * Deliverers of lifecycle effects, by kind. The IssueDO hands each effect from its outbox to the deliverer
 * of its kind, in order; a deliverer that throws is retried with backoff, so it must be idempotent under
 * `key` (the same key is sent on every attempt of the same effect).
 */
import type { Effect } from "../src/domain/lifecycle.ts";
import type { Env } from "../src/env.ts";
import type { IssueView } from "./issue-do.ts";

export type EffectContext = {
  env: Env;
  /** Stable per effect: `<project>#<number>:<seq>:<index>`. */
  key: string;
  issue: IssueView;
};

export type Deliverer<K extends Effect["kind"]> = (
  effect: Extract<Effect, { kind: K }>,
  ctx: EffectContext,
) => Promise<void>;

export type Deliverers = { [K in Effect["kind"]]?: Deliverer<K> };

/** Kinds without a deliverer yet wait in the outbox, durably, until one is deployed. */
export const DELIVERERS: Deliverers = {};

export const effectChannel = (kind: Effect["kind"]) => `effect:${kind}`;

export const deliveredEffectChannels = (deliverers: Deliverers = DELIVERERS) =>
  (Object.keys(deliverers) as Effect["kind"][]).map(effectChannel);
