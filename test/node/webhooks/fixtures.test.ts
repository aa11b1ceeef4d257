import { describe, expect, it } from "vitest";
import { parseDelivery } from "../../../src/forge/webhooks/parse.ts";
import { verifySignature } from "../../../src/forge/webhooks/signature.ts";
import { FIXTURE_CASES } from "../../support/webhook-fixtures.ts";
import { DELIVERY_ID, headersFor, listFixtures, readFixture, SECRET } from "./deliveries.ts";

describe("shared webhook fixtures", () => {
  it("every fixture file has an expected result", async () => {
    expect(Object.keys(FIXTURE_CASES).sort()).toEqual(await listFixtures());
  });

  it.each(Object.entries(FIXTURE_CASES))("%s: signed delivery → expected result", async (path, fixture) => {
    const body = await readFixture(path);
    const headers = headersFor(fixture.delivery, body);

    expect(await verifySignature(fixture.delivery.forge, headers, body, SECRET)).toMatchObject({ ok: true });
    expect(parseDelivery(fixture.delivery.forge, headers, body)).toEqual({
      deliveryId: DELIVERY_ID,
      eventName: fixture.eventName,
      result: fixture.expected,
    });
  });
});

describe("older Gitea and Forgejo headers", () => {
  const giteaShaped = Object.entries(FIXTURE_CASES).filter(
    ([, fixture]) => fixture.delivery.forge !== "github",
  );

  // Before X-Gitea-Event-Type existed only the grouped name was sent; the grouped review names
  // (pull_request_approved / _rejected / _comment) must still come out as reviews.
  it.each(giteaShaped)("%s: grouped X-Gitea-Event alone → same result", async (path, fixture) => {
    const body = await readFixture(path);
    const headers = headersFor(fixture.delivery, body);
    for (const name of ["X-Gitea-Event-Type", "X-Forgejo-Event-Type"]) headers.delete(name);

    expect(parseDelivery(fixture.delivery.forge, headers, body).result).toEqual(fixture.expected);
  });

  // Forgejo before 1.21 sends only the Gitea headers.
  it.each(giteaShaped.filter(([path]) => path.startsWith("forgejo/")))(
    "%s: without X-Forgejo-* headers → same delivery",
    async (path, fixture) => {
      const body = await readFixture(path);
      const headers = headersFor(fixture.delivery, body);
      for (const name of [...headers.keys()].filter((key) => key.startsWith("x-forgejo-")))
        headers.delete(name);

      expect(await verifySignature("forgejo", headers, body, SECRET)).toEqual({
        ok: true,
        header: "X-Gitea-Signature",
      });
      expect(parseDelivery("forgejo", headers, body)).toEqual({
        deliveryId: DELIVERY_ID,
        eventName: fixture.eventName,
        result: fixture.expected,
      });
    },
  );
});
