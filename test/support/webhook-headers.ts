/**
 * The headers each forge really sends with a delivery (Gitea services/webhook/deliver.go; Forgejo adds its
 * own X-Forgejo-* set; GitHub Hookshot). Signatures are passed in, so Node tests and workerd tests can each
 * compute them independently of the code under test.
 */

/** Gitea/Forgejo name an event twice: grouped (X-*-Event) and specific (X-*-Event-Type). */
export type GiteaEventNames = { grouped: string; type: string };

export type Delivery =
  | { forge: "gitea" | "forgejo"; event: GiteaEventNames }
  | { forge: "github"; event: string };

/** Hex HMACs of the body; null when the webhook has no secret. */
export type Signatures = { sha1: string; sha256: string } | null;

export function giteaHeaders(event: GiteaEventNames, signatures: Signatures, deliveryId: string): Headers {
  // Gitea sends the signature headers even without a secret, empty.
  const sha256 = signatures?.sha256 ?? "";
  const sha1 = signatures?.sha1 ?? "";
  return new Headers({
    "Content-Type": "application/json",
    "X-Gitea-Delivery": deliveryId,
    "X-Gitea-Event": event.grouped,
    "X-Gitea-Event-Type": event.type,
    "X-Gitea-Signature": sha256,
    "X-Gogs-Delivery": deliveryId,
    "X-Gogs-Event": event.grouped,
    "X-Gogs-Event-Type": event.type,
    "X-Gogs-Signature": sha256,
    "X-Hub-Signature": `sha1=${sha1}`,
    "X-Hub-Signature-256": `sha256=${sha256}`,
    "X-GitHub-Delivery": deliveryId,
    "X-GitHub-Event": event.grouped,
    "X-GitHub-Event-Type": event.type,
  });
}

export function forgejoHeaders(event: GiteaEventNames, signatures: Signatures, deliveryId: string): Headers {
  const headers = giteaHeaders(event, signatures, deliveryId);
  headers.set("X-Forgejo-Delivery", deliveryId);
  headers.set("X-Forgejo-Event", event.grouped);
  headers.set("X-Forgejo-Event-Type", event.type);
  headers.set("X-Forgejo-Signature", signatures?.sha256 ?? "");
  return headers;
}

export function githubHeaders(event: string, signatures: Signatures, deliveryId: string): Headers {
  const headers = new Headers({
    "Content-Type": "application/json",
    "User-Agent": "GitHub-Hookshot/044aadd",
    "X-GitHub-Event": event,
    "X-GitHub-Delivery": deliveryId,
    "X-GitHub-Hook-ID": "292430182",
    "X-GitHub-Hook-Installation-Target-ID": "79929171",
    "X-GitHub-Hook-Installation-Target-Type": "repository",
  });
  // GitHub leaves the signature headers out entirely when the webhook has no secret.
  if (signatures) {
    headers.set("X-Hub-Signature", `sha1=${signatures.sha1}`);
    headers.set("X-Hub-Signature-256", `sha256=${signatures.sha256}`);
  }
  return headers;
}

export function headersFor(delivery: Delivery, signatures: Signatures, deliveryId: string): Headers {
  switch (delivery.forge) {
    case "gitea":
      return giteaHeaders(delivery.event, signatures, deliveryId);
    case "forgejo":
      return forgejoHeaders(delivery.event, signatures, deliveryId);
    case "github":
      return githubHeaders(delivery.event, signatures, deliveryId);
  }
}
