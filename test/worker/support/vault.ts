import { env, runDurableObjectAlarm } from "cloudflare:test";
import { projectStub } from "../../../src/project-stub.ts";

/** Waits out a vault item's deadline, then runs the project's alarm, which expires it; returns the project's stub. */
export async function expireOnAlarm(project: string, itemId: string) {
  const stub = projectStub(env, project);
  const item = await stub.vaultItem(itemId);
  await new Promise((r) => setTimeout(r, Math.max(0, (item?.expiresAt ?? 0) - Date.now()) + 10));
  await runDurableObjectAlarm(stub);
  await stub.drain();
  return stub;
}
