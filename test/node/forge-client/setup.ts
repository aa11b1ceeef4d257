import {
  createForgeClient,
  type ForgeClientOptions,
  type ForgeKind,
} from "../../../src/forge/client/index.ts";
import type { Recorded } from "./fake-forge.ts";

export const TOKEN = "tok_9f8e7d6c5b4a39281706";
export const NOW = Date.parse("2026-11-20T10:00:00Z");

/** A client whose sleeps are recorded instead of waited, at a fixed time, with no jitter. */
export function makeClient(forge: ForgeKind, apiUrl: string, overrides: Partial<ForgeClientOptions> = {}) {
  const sleeps: number[] = [];
  const client = createForgeClient({
    forge,
    apiUrl,
    repo: "acme/widgets",
    token: TOKEN,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    now: () => NOW,
    random: () => 0,
    ...overrides,
  });
  return { client, sleeps };
}

/** The parts of a request most assertions care about. */
export function brief(request: Recorded) {
  const { method, path, query, body } = request;
  return { method, path, query, body };
}

/** Resolves to what the promise rejects with; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`rejected with a non-Error: ${String(error)}`);
  }
  throw new Error("expected a rejection, got a value");
}
