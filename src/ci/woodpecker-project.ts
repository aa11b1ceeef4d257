/** A project's Woodpecker API, apart from the API's calls so that those stay free of the Worker's bindings. */
import type { Env } from "../env.ts";
import { loadSecrets, type Project } from "../projects/store.ts";
import type { WoodpeckerApi } from "./woodpecker-api.ts";

/** The project's Woodpecker API, when its settings name a server and it has a token for it. */
export async function woodpeckerApiOf(env: Env, project: Project): Promise<WoodpeckerApi | null> {
  const url = project.settings.ci.woodpeckerUrl;
  if (!url) return null;
  const token = (await loadSecrets(env, project.id))?.woodpeckerToken;
  return token ? { url: url.replace(/\/+$/, ""), token } : null;
}
