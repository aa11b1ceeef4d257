/** Bearer tokens: random, and stored only as their SHA-256 so a leaked table grants nothing. */
import { toHex } from "./hex.ts";

const encoder = new TextEncoder();

/** `bytes` random bytes as hex, behind a prefix that secret scanners and log redaction can recognise. */
export const randomToken = (prefix: string, bytes = 32) =>
  `${prefix}${toHex(crypto.getRandomValues(new Uint8Array(bytes)))}`;

export const sha256Hex = async (text: string) =>
  toHex(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
