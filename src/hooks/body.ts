import { BodyTooLargeError, boundedBytes } from "../http/bounded.ts";

/** Reads a request body up to a limit without buffering more than the limit. */
export const MAX_BODY_BYTES = 1024 * 1024;

export async function readLimited(request: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array | null> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > limit) return null;
  if (!request.body) return new Uint8Array();
  // The runtime holds a body to its declared length: one read, no chunk loop (forges declare it).
  if (Number.isInteger(declared)) return new Uint8Array(await request.arrayBuffer());
  return boundedBytes(request.body, limit).catch((error: unknown) => {
    if (error instanceof BodyTooLargeError) return null;
    throw error;
  });
}
