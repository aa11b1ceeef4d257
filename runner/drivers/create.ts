import type { RunnerConfig } from "../config.ts";
import type { WorkDirLayout } from "../paths.ts";
import { ClaudeDriver } from "./claude.ts";
import type { Driver } from "./driver.ts";
import { ScriptedDriver } from "./scripted.ts";
import { UsageLedger } from "./usage.ts";

export function createDriver(config: RunnerConfig, layout: WorkDirLayout): Driver {
  const env = {
    home: layout.agentHome,
    claudeConfigDir: layout.claudeConfigDir,
    anthropic: config.anthropic,
  };
  if (config.driver === "scripted") {
    if (!config.script) throw new Error("the scripted driver needs a script");
    return ScriptedDriver.fromFile(config.script, env);
  }
  return new ClaudeDriver({ ...env, model: config.anthropic.model, usage: new UsageLedger(layout.usageDir) });
}
