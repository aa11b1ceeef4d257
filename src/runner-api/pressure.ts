/** How a runner's backpressure (runner/backpressure.ts) reads, in its log and on the runners page. Pure. */
import type { Pressure } from "./contract.ts";

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;

const WORDING: Record<Pressure[number]["resource"], (value: number, limit: number) => string> = {
  memory: (value, limit) => `memory ${gib(value)} available (needs ${gib(limit)})`,
  disk: (value, limit) => `disk ${gib(value)} free (needs ${gib(limit)})`,
  load: (value, limit) => `load ${value} per CPU (above ${limit})`,
};

/** `memory 0.3 GiB available (needs 1.0 GiB), load 4.2 per CPU (above 3)`. */
export const describePressure = (pressure: Pressure): string =>
  pressure.map(({ resource, value, limit }) => WORDING[resource](value, limit)).join(", ");
