import type { RunnerConfig } from "../config.ts";
import type { Sandbox } from "../sandbox/session-sandbox.ts";
import { ClaudeDriver } from "./claude.ts";
import type { Driver } from "./driver.ts";
import { ScriptedDriver } from "./scripted.ts";

export function createDriver(config: RunnerConfig, sandbox: Sandbox): Driver {
  if (config.driver === "scripted") {
    if (!config.script) throw new Error("the scripted driver needs a script");
    return ScriptedDriver.fromFile(config.script, sandbox);
  }
  return new ClaudeDriver({ sandbox, ...(config.anthropic.model && { model: config.anthropic.model }) });
}
