/**
 * Compares two byte strings in time that depends only on their lengths, never on where they differ, so a
 * caller probing signatures learns nothing from response timing. Different lengths compare unequal, but the
 * loop still runs over the longer input.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) {
    diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  }
  return diff === 0;
}
