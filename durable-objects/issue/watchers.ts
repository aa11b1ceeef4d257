/**
 * Dashboard pages watching an issue: WebSockets its IssueDO holds through the hibernation API (an idle page
 * costs no running object), each told the sequence number and state of every event the object records.
 */

/** More pages than this on one issue is a leak or an attack, not operators. */
export const MAX_WATCHERS = 50;

export function acceptWatcher(ctx: DurableObjectState, request: Request): Response {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket")
    return new Response("expected a WebSocket upgrade\n", { status: 426 });
  if (ctx.getWebSockets().length >= MAX_WATCHERS)
    return new Response(`more than ${MAX_WATCHERS} pages watch this issue\n`, { status: 503 });
  const { 0: client, 1: server } = new WebSocketPair();
  ctx.acceptWebSocket(server);
  return new Response(null, { status: 101, webSocket: client });
}

/** `seq` and `state`: an event was recorded; `activity`: that many session steps were seen. */
export function notifyWatchers(
  ctx: DurableObjectState,
  news: { seq: number; state: string } | { activity: number },
): void {
  const message = JSON.stringify(news);
  for (const socket of ctx.getWebSockets()) {
    try {
      socket.send(message);
    } catch {
      // Closing already: webSocketClose forgets it.
    }
  }
}
