#!/usr/bin/env node
// conveyor-runner, the build host's runner (runner/cli.ts).
import { start } from "./start.js";

await start("conveyor-runner", "runner/cli");
