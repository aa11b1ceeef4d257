/**
 * The operator's channels outside the forge: a webhook taking JSON (Slack's and Discord's incoming webhooks
 * both do) and email through Cloudflare Email Routing's `send_email` binding. Each is configured on the Worker
 * (src/env.ts, src/alert-stub.ts); a message goes to every channel configured when it is written, each on its
 * own outbox channel so a failing one neither holds back nor repeats the other.
 */
import type { AlertChannel } from "../../src/alert-stub.ts";
import { type AlertMessage, emailParts, webhookBody } from "../../src/domain/alerts.ts";
import type { Env } from "../../src/env.ts";
import { log } from "../../src/log.ts";

/** A webhook's answer that trying again cannot change: the URL is wrong, or the receiver refuses the body. */
const lasting = (status: number) => status >= 400 && status < 500 && status !== 408 && status !== 429;

/**
 * Sends one message on `channel`. Throws for what may pass (the outbox retries with backoff); a refusal that
 * trying again cannot change is logged and the message dropped, rather than holding up the ones behind it.
 */
export async function sendAlert(env: Env, channel: AlertChannel, message: AlertMessage): Promise<void> {
  switch (channel) {
    case "webhook": {
      const url = env.ALERT_WEBHOOK_URL;
      if (!url) return dropped(channel, message, "no longer configured");
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(webhookBody(message)),
      });
      // The answer's body is the receiver's: only its status is read (and the connection freed).
      await res.body?.cancel();
      if (res.ok) return;
      if (lasting(res.status)) return dropped(channel, message, `refused: ${res.status}`);
      throw new Error(`alert webhook answered ${res.status}`);
    }
    case "email": {
      const { ALERT_EMAIL: binding, ALERT_EMAIL_FROM: from, ALERT_EMAIL_TO: to } = env;
      if (!binding || !from || !to) return dropped(channel, message, "no longer configured");
      const { subject, body } = emailParts(message);
      await binding.send({ from, to, subject, text: body });
      return;
    }
  }
}

function dropped(channel: AlertChannel, message: AlertMessage, reason: string): void {
  // The webhook's URL is a secret (Slack's and Discord's carry their token): never logged.
  log.error("alert not sent", { channel, key: message.alert.key, kind: message.kind, reason });
}
