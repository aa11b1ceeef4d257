import { createHmac, randomUUID } from "node:crypto";
import { goJson } from "../http.ts";
import type { Delivery, Hook, Repo } from "../state.ts";
import { fullName, type Store } from "../store.ts";
import { groupedEvent, type HookEventType, hookWants } from "./events.ts";

const RESPONSE_LIMIT = 64 * 1024;

/**
 * Delivers webhooks like Forgejo: pretty-printed JSON, the X-Forgejo-* headers plus every Gitea-, Gogs- and
 * GitHub-compatible one, one attempt with a timeout, no retry. Deliveries leave one at a time in the order
 * they were emitted, after the API answer that caused them; each is recorded in the state.
 */
export class Deliverer {
  readonly #store: Store;
  readonly #timeoutMs: number;
  #queue: Promise<void> = Promise.resolve();

  constructor(store: Store, timeoutMs: number) {
    this.#store = store;
    this.#timeoutMs = timeoutMs;
  }

  emit(repo: Repo, type: HookEventType, payload: unknown): void {
    const body = goJson(payload, 2);
    for (const hook of repo.hooks.filter((candidate) => hookWants(candidate, type))) {
      this.#enqueue(this.#record(repo, hook, groupedEvent(type), type, body, null));
    }
  }

  /** Sends a recorded delivery's exact body again under a new delivery id, like Gitea's "replay". */
  async redeliver(deliveryId: string): Promise<Delivery> {
    const original = this.#store.state.deliveries.find((delivery) => delivery.id === deliveryId);
    if (!original) throw new RangeError(`local forge: no delivery ${deliveryId}`);
    const repo = this.#store.state.repos.find((candidate) => fullName(candidate) === original.repo);
    const hook = repo?.hooks.find((candidate) => candidate.id === original.hookId);
    if (!repo || !hook) throw new RangeError(`local forge: the hook of delivery ${deliveryId} is gone`);
    const replay = this.#record(repo, hook, original.event, original.eventType, original.body, original.id);
    await this.#enqueue(replay);
    return replay;
  }

  /** Resolves once every delivery emitted so far has been answered or has failed. */
  async idle(): Promise<void> {
    let queue: Promise<void>;
    do {
      queue = this.#queue;
      await queue;
    } while (queue !== this.#queue);
  }

  #record(
    repo: Repo,
    hook: Hook,
    event: string,
    eventType: string,
    body: string,
    of: string | null,
  ): Delivery {
    const id = randomUUID();
    const delivery: Delivery = {
      id,
      hookId: hook.id,
      repo: fullName(repo),
      event,
      eventType,
      url: hook.url,
      body,
      headers: headers(id, event, eventType, signatures(hook.secret, body)),
      redeliveryOf: of,
      createdAt: this.#store.now(),
      status: null,
      responseBody: "",
      error: null,
      durationMs: null,
    };
    this.#store.state.deliveries.push(delivery);
    this.#store.save();
    return delivery;
  }

  #enqueue(delivery: Delivery): Promise<void> {
    this.#queue = this.#queue.then(() => this.#send(delivery));
    return this.#queue;
  }

  async #send(delivery: Delivery): Promise<void> {
    const started = performance.now();
    try {
      const response = await fetch(delivery.url, {
        method: "POST",
        headers: delivery.headers,
        body: delivery.body,
        redirect: "manual",
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      delivery.status = response.status;
      delivery.responseBody = (await response.text()).slice(0, RESPONSE_LIMIT);
    } catch (error) {
      delivery.error = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    delivery.durationMs = Math.round(performance.now() - started);
    this.#store.save();
  }
}

/** Hex HMACs of the body; empty without a secret (Gitea then sends the headers empty). */
function signatures(secret: string, body: string): { sha1: string; sha256: string } {
  if (secret === "") return { sha1: "", sha256: "" };
  const hmac = (algorithm: string) => createHmac(algorithm, secret).update(body, "utf8").digest("hex");
  return { sha1: hmac("sha1"), sha256: hmac("sha256") };
}

/** Forgejo's services/webhook/deliver.go: its own headers, then Gitea's, Gogs' and GitHub's copies. */
function headers(
  id: string,
  event: string,
  eventType: string,
  signature: { sha1: string; sha256: string },
): Record<string, string> {
  return {
    "Content-Type": "application/json",
    "User-Agent": "Go-http-client/1.1",
    "X-Forgejo-Delivery": id,
    "X-Forgejo-Event": event,
    "X-Forgejo-Event-Type": eventType,
    "X-Forgejo-Signature": signature.sha256,
    "X-Gitea-Delivery": id,
    "X-Gitea-Event": event,
    "X-Gitea-Event-Type": eventType,
    "X-Gitea-Signature": signature.sha256,
    "X-Gogs-Delivery": id,
    "X-Gogs-Event": event,
    "X-Gogs-Event-Type": eventType,
    "X-Gogs-Signature": signature.sha256,
    "X-Hub-Signature": `sha1=${signature.sha1}`,
    "X-Hub-Signature-256": `sha256=${signature.sha256}`,
    "X-GitHub-Delivery": id,
    "X-GitHub-Event": event,
    "X-GitHub-Event-Type": eventType,
  };
}
