/** What a CLI command declares, and what it gets to run with. */
import type { ParseArgsOptionsConfig } from "node:util";
import { z } from "zod";
import { CliError, type OperatorApi } from "./api.ts";

export type Context = {
  api: OperatorApi;
  /** The Worker's URL as given (`--url`). */
  url: string;
  /** `--project` (or CONVEYOR_PROJECT), for the commands about one issue. */
  project: string | undefined;
  /** The environment the CLI runs in (CONVEYOR_FORGE_TOKEN, USER). */
  env: Record<string, string | undefined>;
  /** Prints `text`, or `json` with `--json`. */
  print(text: string, json: unknown): void;
};

export type Command<S extends z.ZodType = z.ZodType> = {
  /** One or two words: `status`, `project add`. */
  name: string;
  /** Positional arguments, in order; each reaches `input` under its name. */
  args: readonly string[];
  usage: string;
  summary: string;
  options?: ParseArgsOptionsConfig;
  /** Parses `{ ...positionals by name, ...option values }`. */
  input: S;
  run(input: z.output<S>, ctx: Context): Promise<void>;
};

export const command = <S extends z.ZodType>(c: Command<S>): Command<S> => c;

export const issueNumber = z.coerce
  .number({ error: "the issue number must be a number" })
  .int()
  .positive()
  .max(Number.MAX_SAFE_INTEGER);

/** `--project` (or CONVEYOR_PROJECT), for the commands about one project's issues or settings. */
export function projectOf(ctx: Context): string {
  if (!ctx.project) throw new CliError("this command needs --project (or CONVEYOR_PROJECT)", 2);
  return ctx.project;
}
