/**
 * Limits for calls to services Conveyor does not run (a CI server, Cloudflare Access): every such call gets a
 * deadline, and a body is read only up to a size, so a stalled or endless answer costs a bounded wait and
 * bounded memory.
 */

export class BodyTooLargeError extends Error {
  constructor(maxBytes: number) {
    super(`the answer's body is over ${maxBytes} bytes`);
    this.name = "BodyTooLargeError";
  }
}

/** The response body as text, read until `maxBytes` at most; past that the rest is cancelled and it throws. */
export async function boundedText(res: Response, maxBytes: number): Promise<string> {
  return new TextDecoder().decode(await boundedBytes(res.body, maxBytes));
}

/** A body read until `maxBytes` at most, never buffering more; past that the rest is cancelled and it throws. */
export async function boundedBytes(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all;
}
