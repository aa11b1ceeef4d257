import { relativeTime } from "./format.ts";

/**
 * The one script of the dashboard, served from /dashboard/live.js (the CSP forbids inline script). On every
 * page it keeps the relative times (`<time data-at>`) ticking, counted on the server's clock (`<main
 * data-now>`, the moment the page was rendered) so that a browser whose clock is off still reads them right.
 * A page whose <main> names a `data-live` WebSocket reloads its content whenever that socket says something
 * changed, and reconnects (then reloads, for what it missed) when the socket drops.
 */
export const LIVE_SCRIPT = `"use strict";
(() => {
  const relativeTime = ${relativeTime.toString()};
  let skew = 0;
  const setClock = (main) => {
    const now = Number(main && main.dataset.now);
    if (now > 0) skew = now - Date.now();
  };
  const tick = () => {
    const now = Date.now() + skew;
    for (const time of document.querySelectorAll("time[data-at]")) {
      const text = relativeTime(Number(time.dataset.at), now);
      if (time.textContent !== text) time.textContent = text;
    }
  };
  setClock(document.querySelector("main"));
  tick();
  setInterval(tick, 1000);

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
        if (next && current) {
          setClock(next);
          current.replaceChildren(...next.childNodes);
          tick();
        }
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
