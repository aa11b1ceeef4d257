/**
 * Operator API for the factory's alerts (docs/supervisor.md#the-operator-channel): `GET /alerts`, the alerts
 * open now (each with the sources that stand behind it) and the operator's channels with what waits on each and
 * why its last delivery failed, if it did.
 */
import { Hono } from "hono";
import { alertStub } from "../alert-stub.ts";
import type { Env } from "../env.ts";

export const alertRoutes = new Hono<{ Bindings: Env }>();

alertRoutes.get("/alerts", async (c) => c.json(await alertStub(c.env).view()));
