import type { Env } from "./env.ts";

/** The factory's one AlertDO: every project's and the watchdog's alerts meet there, to be told once. */
export function alertStub(env: Env) {
  return env.ALERTS.get(env.ALERTS.idFromName("factory"));
}

export const ALERT_CHANNELS = ["webhook", "email"] as const;
export type AlertChannel = (typeof ALERT_CHANNELS)[number];

/** The operator's channels the Worker has configured (docs/supervisor.md#the-operator-channel). */
export function configuredChannels(env: Env): AlertChannel[] {
  const channels: AlertChannel[] = [];
  if (env.ALERT_WEBHOOK_URL) channels.push("webhook");
  if (env.ALERT_EMAIL && env.ALERT_EMAIL_FROM && env.ALERT_EMAIL_TO) channels.push("email");
  return channels;
}
