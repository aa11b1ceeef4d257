import type { DeliveryResult, ForgeEvent } from "./events.ts";
import { parsePayload } from "./payload.ts";
import { actionOnly } from "./schema.ts";

export function emitted(event: ForgeEvent): DeliveryResult {
  return { kind: "event", event };
}

export function ignoredEvent(eventName: string): DeliveryResult {
  return { kind: "ignored", reason: `event ${eventName} is not used` };
}

export function ignoredAction(eventName: string, action: string): DeliveryResult {
  return { kind: "ignored", reason: `${eventName} action ${action} is not used` };
}

/** The payload's `action`, read before the full schema so unused actions are ignored whatever their shape. */
export function readAction(eventName: string, body: unknown): string {
  return parsePayload(eventName, actionOnly, body).action;
}

export function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}
