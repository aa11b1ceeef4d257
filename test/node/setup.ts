/**
 * Each node test file's last teardown: whatever its harnesses started and did not stop (a start given up on by
 * a `beforeAll` that timed out, a test that threw before its stop) is killed, each process group whole.
 */
import { afterAll } from "vitest";
import { killTracked } from "../support/children.ts";

// Registered before the file's own hooks, so run after them (vitest runs `afterAll` hooks in reverse).
afterAll(() => {
  const left = killTracked({ close: true });
  if (left.length > 0) console.warn(`killed processes the file left running: ${left.join(", ")}`);
});
