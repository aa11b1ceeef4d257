import type { RunnerApi } from "./api.ts";
import { type RunnerIdentity, storeIdentity } from "./identity.ts";
import type { Logger } from "./log.ts";
import type { Secrets } from "./redact.ts";

type Options = { api: RunnerApi; file: string; identity: RunnerIdentity; log: Logger; secrets: Secrets };

/**
 * Keeps the runner's token alive: when the Worker says rotation is due, obtain the next token, store it in the
 * identity file, and only then use it. Until its first use the old token still works, so a crash anywhere
 * leaves a file holding a token that works; a failed rotation is tried again at the Worker's next request.
 */
export class TokenRotation {
  readonly #options: Options;
  #rotating: Promise<void> | undefined;

  constructor(options: Options) {
    this.#options = options;
  }

  /** Starts a rotation unless one is under way. */
  due(): void {
    this.#rotating ??= this.#rotate().finally(() => {
      this.#rotating = undefined;
    });
  }

  async #rotate(): Promise<void> {
    const { api, file, identity, log, secrets } = this.#options;
    try {
      const { token, expiresAt } = await api.rotate();
      secrets.add(token);
      await storeIdentity(file, { runnerId: identity.runnerId, token });
      api.token = token;
      log.info("runner token rotated", { runnerId: identity.runnerId, expiresAt, file });
    } catch (error) {
      log.warn("runner token rotation failed; the Worker asks again", { error });
    }
  }
}
