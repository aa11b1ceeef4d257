import type { TestProject } from "vitest/node";
import { type Services, startServices } from "../support/services/control.ts";
import { dropWorkerdAlarmNotes } from "./workerd-notes.ts";

declare module "vitest" {
  export interface ProvidedContext {
    services: Services;
  }
}

export default async function setup(project: TestProject) {
  const restoreStderr = dropWorkerdAlarmNotes();
  const { services, stop } = await startServices();
  project.provide("services", services);
  return async () => {
    await stop();
    restoreStderr();
  };
}
