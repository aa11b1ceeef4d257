import type { Env } from "./env.ts";

/** The one Durable Object that owns an issue's lifecycle. */
export function issueStub(env: Env, project: string, number: number) {
  return env.ISSUES.get(env.ISSUES.idFromName(`${project}#${number}`));
}
