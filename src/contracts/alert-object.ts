/**
 * What the Worker and the ProjectDOs may call on the factory's AlertDO (durable-objects/alerts/): one object
 * for the whole factory, which keeps the open alerts and tells the operator's channel of each once.
 */
import type { OpenAlert, ResolvedAlert, SourceReport } from "../domain/alerts.ts";

/** An operator channel's state: configured, and how its last delivery went. */
export type AlertChannelState = { channel: "webhook" | "email"; waiting: number; lastError: string | null };

/** `resolved`: the newest resolved alerts the object keeps (RESOLVED_KEPT), newest first. */
export type AlertsView = { open: OpenAlert[]; resolved: ResolvedAlert[]; channels: AlertChannelState[] };

export type Retire = { prefix: string; keep: readonly string[] };

export interface AlertObject extends Rpc.DurableObjectBranded {
  /**
   * Each source's whole set of alerts now; returns what opened and resolved (told once, from the outbox).
   * `retire`: the sources named with this prefix that are not among `keep` are gone (a deleted project's):
   * their alerts resolve as if they had reported none.
   */
  report(
    reports: readonly SourceReport[],
    retire?: Retire,
  ): Promise<{ opened: string[]; resolved: string[] }>;
  /** The open alerts, the latest resolved and the channels' state (the API, the dashboard). */
  view(): AlertsView;
  /** Delivers every message waiting, backoffs included (tests, operators). */
  drain(): Promise<void>;
}
