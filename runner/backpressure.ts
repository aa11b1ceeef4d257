/**
 * Backpressure: a runner claims no new job while its host could not carry one — available memory or the work
 * dir's free disk below a threshold, or the one-minute load per CPU above one — and says why with its claims
 * and heartbeats (the runners page shows it); it claims again by itself once the host has recovered past
 * the thresholds by a margin, so a figure hovering at a threshold does not flap. Jobs already running go on.
 */
import type { HostReport, Pressure } from "../src/runner-api/contract.ts";
import { describePressure } from "../src/runner-api/pressure.ts";
import type { Logger } from "./log.ts";

const MIB = 1024 ** 2;

/** Thresholds from the runner's config; 0 turns a check off. */
export type PressureLimits = { minMemoryBytes: number; minDiskBytes: number; maxLoadPerCpu: number };

/**
 * The defaults. One session (Claude Code in its sandbox, with git) was measured at about 320 MiB resident
 * against the Messages-API stand-in (runner/README.md#backpressure); a real session also runs the project's
 * builds and tests beside it, so a new one needs about three times that free. A worktree and its mirror's
 * growth take far less disk than 2 GiB; the supervisor's own load warning is at 2 per CPU.
 */
export const DEFAULT_PRESSURE_LIMITS: PressureLimits = {
  minMemoryBytes: 1024 * MIB,
  minDiskBytes: 2048 * MIB,
  maxLoadPerCpu: 3,
};

/** A held-back runner claims again only once each figure is this share past its threshold. */
export const RESUME_MARGIN = 0.1;

/** What is measured: the host's memory and load, and the work dir's free disk (unknown before the first look). */
export type HostSample = HostReport & { diskFreeBytes?: number };

/** The resources past their thresholds (with the resume margin while `holding`); empty: claim. Pure. */
export function pressureOf(sample: HostSample, limits: PressureLimits, holding: boolean): Pressure {
  const margin = holding ? 1 + RESUME_MARGIN : 1;
  const found: Pressure = [];
  const { minMemoryBytes, minDiskBytes, maxLoadPerCpu } = limits;
  if (minMemoryBytes > 0 && sample.memAvailableBytes < minMemoryBytes * margin) {
    found.push({ resource: "memory", value: sample.memAvailableBytes, limit: minMemoryBytes });
  }
  const disk = sample.diskFreeBytes;
  if (minDiskBytes > 0 && disk !== undefined && disk < minDiskBytes * margin) {
    found.push({ resource: "disk", value: disk, limit: minDiskBytes });
  }
  const perCpu = Math.round((sample.load1 / sample.cpus) * 100) / 100;
  if (maxLoadPerCpu > 0 && perCpu > maxLoadPerCpu / margin) {
    found.push({ resource: "load", value: perCpu, limit: maxLoadPerCpu });
  }
  return found;
}

/** The runner's gate: measured before each claim; logs when it starts and stops holding back. */
export class Backpressure {
  readonly #limits: PressureLimits;
  readonly #measure: () => Promise<HostSample>;
  readonly #log: Logger;
  #pressure: Pressure = [];
  #looking: Promise<Pressure> | undefined;

  constructor(limits: PressureLimits, measure: () => Promise<HostSample>, log: Logger) {
    this.#limits = limits;
    this.#measure = measure;
    this.#log = log;
  }

  /** What the last look found (empty: not holding back): claims and heartbeats carry it. */
  get current(): Pressure {
    return this.#pressure;
  }

  /** Looks at the host now: what holds the runner back (empty: it may claim). Slots asking at once share a look. */
  check(): Promise<Pressure> {
    this.#looking ??= this.#look().finally(() => {
      this.#looking = undefined;
    });
    return this.#looking;
  }

  async #look(): Promise<Pressure> {
    const holding = this.#pressure.length > 0;
    const pressure = pressureOf(await this.#measure(), this.#limits, holding);
    if (pressure.length > 0 && !holding) {
      this.#log.warn("holding back: no new jobs until the host recovers", {
        pressure: describePressure(pressure),
      });
    } else if (pressure.length === 0 && holding) {
      this.#log.info("the host recovered: claiming again");
    }
    this.#pressure = pressure;
    return pressure;
  }
}
