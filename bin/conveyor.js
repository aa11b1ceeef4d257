#!/usr/bin/env node
// conveyor, the operator CLI (cli/conveyor.ts).
import { start } from "./start.js";

await start("conveyor", "cli/conveyor");
