/** A project's post policy: its forge's web origin, and the links and mentions its settings allow. Pure. */
import { type ProjectRegistration, type ProjectSettings, repoWebUrl } from "../../projects/config.ts";
import type { PostPolicy } from "./policy.ts";

type PolicySource = Pick<ProjectRegistration, "forge" | "apiUrl" | "repo"> & {
  settings: Pick<ProjectSettings, "links" | "mentions">;
};

/** `also`: logins this post may mention besides the project's list (the author, where allowed). */
export function postPolicy(project: PolicySource, also: readonly string[] = []): PostPolicy {
  return {
    forge: project.forge,
    forgeOrigin: new URL(repoWebUrl(project.forge, project.apiUrl, project.repo)).origin,
    linkHosts: project.settings.links.allow,
    mentions: [...project.settings.mentions.allow, ...also],
  };
}
