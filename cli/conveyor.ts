#!/usr/bin/env node
/**
 * conveyor: the operator CLI (`npx conveyor …` in the repository; bin/conveyor.js). It talks only to the
 * Worker's operator API. Exit codes: 0 done, 1 the Worker refused or could not be reached, 2 bad usage.
 */
import { COMMANDS } from "./commands/index.ts";
import { conveyor } from "./main.ts";

process.exitCode = await conveyor(COMMANDS, process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
