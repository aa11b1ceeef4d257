/**
 * Dashboard pages watching an issue: WebSockets its IssueDO holds through the hibernation API (an idle page
 * costs no running object), each told whenever what the issue page shows changed, and the page reloads its
 * content.
 */
import type { IssueRecordTable } from "../../src/contracts/issue-object.ts";
import type { Recorded } from "./event-log.ts";

/** More pages than this on one issue is a leak or an attack, not operators. */
export const MAX_WATCHERS = 50;

/**
 * What changed: `seq` and `state`, an event was recorded; `activity`, that many session steps were seen;
 * `outbox`, an effect was delivered or failed an attempt; `records`, D1 holds newer rows of these tables.
 */
export type WatcherNews =
  | { seq: number; state: string }
  | { activity: number }
  | { outbox: "delivered" | "retrying" }
  | { records: readonly IssueRecordTable[] };

export const recordedNews = ({ seq, state }: Recorded): WatcherNews => ({ seq, state });

export function acceptWatcher(ctx: DurableObjectState, request: Request): Response {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket")
    return new Response("expected a WebSocket upgrade\n", { status: 426 });
  if (ctx.getWebSockets().length >= MAX_WATCHERS)
    return new Response(`more than ${MAX_WATCHERS} pages watch this issue\n`, { status: 503 });
  const { 0: client, 1: server } = new WebSocketPair();
  ctx.acceptWebSocket(server);
  return new Response(null, { status: 101, webSocket: client });
}

export function notifyWatchers(ctx: DurableObjectState, news: WatcherNews): void {
  const sockets = ctx.getWebSockets();
  if (sockets.length === 0) return;
  const message = JSON.stringify(news);
  for (const socket of sockets) {
    try {
      socket.send(message);
    } catch {
      // Closing already: webSocketClose forgets it.
    }
  }
}
