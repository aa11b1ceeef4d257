/** `/dashboard/alerts`: the factory's alerts, open and resolved, from its AlertDO (src/api/alerts.ts has the API's). */
import { Hono } from "hono";
import { alertStub } from "../alert-stub.ts";
import type { DashboardEnv } from "./context.ts";
import { AlertsPage } from "./pages/alerts.tsx";
import { renderPage } from "./render.tsx";

export const alertPages = new Hono<DashboardEnv>();

alertPages.get("/alerts", async (c) =>
  renderPage(c, "Alerts", <AlertsPage view={await alertStub(c.env).view()} now={Date.now()} />),
);
