import { expect, it } from "vitest";
import { RunnerApi } from "../../../runner/api.ts";
import { FakeWorker } from "./support/fake-worker.ts";

it("register and every claim report the sandbox RunnerApi was given (default bubblewrap)", async () => {
  const worker = await FakeWorker.start();
  try {
    const unsafe = new RunnerApi(worker.url, undefined, { sandbox: "none" });
    const registration = { registrationToken: worker.registrationToken, name: "host", version: "1" };
    unsafe.token = (await unsafe.register(registration)).token;
    await unsafe.claim({ waitMs: 0, holding: [] });
    await new RunnerApi(worker.url, [...worker.tokens][0]).claim({ waitMs: 0, holding: [] });
    expect(worker.calls.map((call) => [call.route, call.body.sandbox])).toEqual([
      ["register", "none"],
      ["claim", "none"],
      ["claim", "bubblewrap"],
    ]);
    expect(worker.violations).toEqual([]);
  } finally {
    await worker.close();
  }
});
