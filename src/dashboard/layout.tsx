/** The page frame and the pieces every page shares. */
import type { Child } from "hono/jsx";
import type { Principal } from "./context.ts";
import { formatTime, relativeTime } from "./format.ts";

export function Layout(props: {
  title: string;
  principal?: Principal;
  csrf?: string;
  flash?: string | null;
  /** See renderPage. */
  live?: string | undefined;
  /** When the page was rendered: the script's times tick from the server's clock, not the browser's. */
  now: number;
  children?: Child;
}) {
  const { title, principal, csrf, flash, live, now, children } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Conveyor`}</title>
        <link rel="stylesheet" href="/dashboard/style.css" />
        <script src="/dashboard/live.js" defer />
      </head>
      <body>
        <header>
          <a class="brand" href="/dashboard">
            Conveyor
          </a>
          {principal && (
            <nav>
              <a href="/dashboard">Projects</a>
              <a href="/dashboard/outcomes">Outcomes</a>
              <a href="/dashboard/approvals">Approvals</a>
              <a href="/dashboard/vault">Vault</a>
              <a href="/dashboard/runners">Runners</a>
              <a href="/dashboard/health">Health</a>
              <a href="/dashboard/alerts">Alerts</a>
            </nav>
          )}
          {principal && csrf && (
            <form method="post" action="/dashboard/logout" class="signout">
              <span>{principal.name}</span>
              <input type="hidden" name="csrf" value={csrf} />
              <button type="submit">Sign out</button>
            </form>
          )}
        </header>
        {/* Outside <main>: a live page's refresh replaces <main>, and the flash answers this browser's last form. */}
        {flash && (
          <p class="flash" role="status">
            {flash}
          </p>
        )}
        <main data-live={live} data-now={now}>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

export const StateBadge = (props: { state: string }) => (
  <span class={`state state-${props.state}`}>{props.state.replace(/_/g, " ")}</span>
);

export const issuePath = (project: string, number: number) =>
  `/dashboard/projects/${project}/issues/${number}`;

/** A moment as `3 min ago` or `in 20 s`; the dashboard's script keeps it ticking (`data-at`). */
export const When = (props: { at: number; now: number }) => (
  <time datetime={new Date(props.at).toISOString()} title={formatTime(props.at)} data-at={props.at}>
    {relativeTime(props.at, props.now)}
  </time>
);
