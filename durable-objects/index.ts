/** The Worker's Durable Object classes, bound by these names in wrangler.toml; src/index.ts exports them. */
export { AlertDO } from "./alerts/alert-do.ts";
export { IssueDO } from "./issue/issue-do.ts";
export { ForgePacerDO } from "./pacer/forge-pacer-do.ts";
export { ProjectDO } from "./project/project-do.ts";
