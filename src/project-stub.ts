import { randomToken } from "./crypto/tokens.ts";
import type { Env } from "./env.ts";
import { PROJECT_ID } from "./projects/config.ts";

/** The one Durable Object that owns a project's job queue. */
export function projectStub(env: Env, project: string) {
  return env.PROJECTS.get(env.PROJECTS.idFromName(project));
}

/** Job ids are `<project>.<number>.<random>`, so a runner's call about a job finds its ProjectDO. */
export const newJobId = (project: string, number: number) => `${project}.${number}.${randomToken("", 6)}`;

export function projectOfJob(id: string): string | null {
  const [project] = id.split(".", 1);
  return project !== undefined && id.length > project.length && PROJECT_ID.test(project) ? project : null;
}
