import { GiteaClient } from "./gitea.ts";
import { GitHubClient } from "./github.ts";
import type { ForgeClientOptions } from "./options.ts";
import type { ForgeClient, Plain } from "./types.ts";

export type { BackoffPolicy } from "../../domain/backoff.ts";
export {
  ForgeError,
  ForgeHttpError,
  ForgeNetworkError,
  ForgePacingWait,
  ForgeRateLimitError,
  ForgeSchemaError,
  hasStatus,
} from "./errors.ts";
export { GiteaClient } from "./gitea.ts";
export { GitHubClient } from "./github.ts";
export type { FetchLike, WritePacer } from "./http.ts";
export type { ForgeClientOptions } from "./options.ts";
export type * from "./types.ts";

/**
 * A client that posts any text: a person's (tests, the demo). Conveyor's own is `clientOf`'s
 * (src/projects/store.ts), which posts only what src/forge/post made.
 */
export function createForgeClient(options: ForgeClientOptions): ForgeClient<Plain> {
  switch (options.forge) {
    case "forgejo":
    case "gitea":
      return new GiteaClient(options);
    case "github":
      return new GitHubClient(options);
    default:
      throw new RangeError(`unknown forge: ${String((options as { forge: unknown }).forge)}`);
  }
}
