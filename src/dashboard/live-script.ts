/**
 * The one script of the dashboard, served from /dashboard/live.js (the CSP forbids inline script): a page
 * whose <main> names a `data-live` WebSocket reloads its content whenever that socket says something changed,
 * and reconnects (then reloads, for what it missed) when the socket drops.
 */
export const LIVE_SCRIPT = `"use strict";
(() => {
  const main = document.querySelector("main[data-live]");
  if (!main) return;
  const url = new URL(main.dataset.live, location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  let running = false;
  let again = false;
  async function reload() {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        const res = await fetch(location.href, { credentials: "same-origin", headers: { accept: "text/html" } });
        if (!res.ok) return;
        const next = new DOMParser().parseFromString(await res.text(), "text/html").querySelector("main");
        const current = document.querySelector("main");
        if (next && current) current.replaceChildren(...next.childNodes);
      } while (again);
    } finally {
      running = false;
    }
  }
  function connect(delay, missed) {
    const socket = new WebSocket(url);
    socket.onopen = () => {
      delay = 1000;
      if (missed) reload();
    };
    socket.onmessage = () => reload();
    socket.onclose = () => setTimeout(() => connect(Math.min(delay * 2, 30000), true), delay);
  }
  connect(1000, false);
})();
`;
