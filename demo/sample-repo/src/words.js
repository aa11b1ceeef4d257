/** Splits text into words: runs of letters and digits. */
export function words(text) {
  return text.match(/[\p{L}\p{N}]+/gu) ?? [];
}
