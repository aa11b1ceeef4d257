/**
 * `conveyor <args>` as the CLI tests run it: in the test's own process (the function the bin runs, with its
 * output captured; a process per command would add only its start), or as the bin's own process where exit
 * codes and streams are what is tested.
 */
import { execFile } from "node:child_process";
import { expect } from "vitest";
import { COMMANDS } from "../../../cli/commands/index.ts";
import { conveyor } from "../../../cli/main.ts";

export type Run = { code: number; stdout: string; stderr: string };
type Env = Record<string, string | undefined>;

const BIN = new URL("../../../bin/conveyor.js", import.meta.url).pathname;

/** The CLI in this process, with `base()` (the Worker's URL and token) under each call's environment. */
export function inProcess(base: () => Env) {
  const run = async (args: string[], env: Env = {}): Promise<Run> => {
    const result = { code: 0, stdout: "", stderr: "" };
    result.code = await conveyor(COMMANDS, args, {
      env: { USER: "tester", ...base(), ...env },
      stdout: (text) => {
        result.stdout += text;
      },
      stderr: (text) => {
        result.stderr += text;
      },
    });
    return result;
  };
  const ok = async (args: string[], env?: Env): Promise<string> => {
    const result = await run(args, env);
    expect(result, args.join(" ")).toMatchObject({ code: 0, stderr: "" });
    return result.stdout;
  };
  return {
    run,
    ok,
    json: async (args: string[]) => JSON.parse(await ok([...args, "--json"])),
    /** One line on stderr, nothing on stdout, and the exit code. */
    fails: async (args: string[], code: number, message: RegExp, env?: Env) => {
      const result = await run(args, env);
      expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(code);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/^conveyor: [^\n]+\n$/);
      expect(result.stderr).toMatch(message);
    },
  };
}

/** The bin as an operator runs it, with only PATH and `env` in its environment. */
export const bin = (args: string[], env: Record<string, string> = {}) =>
  new Promise<Run>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
