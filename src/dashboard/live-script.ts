import { relativeTime } from "./format.ts";

/**
 * The one script of the dashboard, served from /dashboard/live.js (the CSP forbids inline script). On every
 * page it keeps the relative times (`<time data-at>`) ticking, counted on the server's clock (`<main
 * data-now>`, the moment the page was rendered) so that a browser whose clock is off still reads them right.
 * A page whose <main> names a `data-live` WebSocket reloads its content whenever that socket says something
 * changed, and reconnects (then reloads, for what it missed) when the socket drops. A reload keeps what the
 * operator typed into a form (a rejection's reason) and the focus, and sends LIVE_REFRESH_HEADER: the page is
 * the same one, so the flash its last form left is neither shown again nor used up (see render.tsx).
 */
export const LIVE_REFRESH_HEADER = "x-dashboard-refresh";

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
  // What the operator is typing (a rejection's reason) outlives a reload: each text field by form and name.
  const TYPED = "input[type=text][name], input:not([type])[name], textarea[name]";
  const fieldKey = (field) => (field.form ? field.form.getAttribute("action") : "") + " " + field.name;
  const typed = (root) => {
    const active = document.activeElement;
    const focused = active && root.contains(active) && active.matches(TYPED) ? active : null;
    const edited = [...root.querySelectorAll(TYPED)].filter((field) => field.value !== field.defaultValue);
    return {
      values: new Map(edited.map((field) => [fieldKey(field), field.value])),
      focused: focused && { key: fieldKey(focused), start: focused.selectionStart, end: focused.selectionEnd },
    };
  };
  const retype = (root, { values, focused }) => {
    for (const field of root.querySelectorAll(TYPED)) {
      const key = fieldKey(field);
      if (values.has(key)) field.value = values.get(key);
      if (focused && key === focused.key) {
        field.focus();
        field.setSelectionRange(focused.start, focused.end);
      }
    }
  };
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
        const res = await fetch(location.href, {
          credentials: "same-origin",
          headers: { accept: "text/html", "${LIVE_REFRESH_HEADER}": "1" },
        });
        if (!res.ok) return;
        const next = new DOMParser().parseFromString(await res.text(), "text/html").querySelector("main");
        const current = document.querySelector("main");
        if (next && current) {
          const kept = typed(current);
          setClock(next);
          current.replaceChildren(...next.childNodes);
          retype(current, kept);
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
