import { env } from "cloudflare:test";
import { alertStub } from "../../../src/alert-stub.ts";
import type { AlertMessage } from "../../../src/domain/alerts.ts";
import { control } from "./review.ts";

/** What the operator's webhook receives (the control server keeps it): Slack's `text`, Discord's `content`. */
export type Received = { text: string; content: string; conveyor: AlertMessage & { id: string } };

/** What the operator's webhook was told about `key`, once the AlertDO's outbox is delivered. */
export async function told(key: string): Promise<Received[]> {
  await alertStub(env).drain();
  const all = await control<Received[]>("alerts-received");
  return all.filter((m) => m.conveyor.alert.key === key);
}
