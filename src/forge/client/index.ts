import { GiteaClient } from "./gitea.ts";
import { GitHubClient } from "./github.ts";
import type { ForgeClientOptions } from "./options.ts";
import type { ForgeClient } from "./types.ts";

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

export function createForgeClient(options: ForgeClientOptions): ForgeClient {
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
