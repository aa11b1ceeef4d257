/**
 * Secrets at rest: AES-256-GCM under a key from the Worker secret CONVEYOR_SECRETS_KEY (base64, 32 bytes).
 * The associated data binds each ciphertext to its owner, so a row copied to another project fails to open.
 */
const VERSION = "v1";

export class SecretsKeyError extends Error {}

export async function importSecretsKey(base64: string | undefined): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", secretsKeyBytes(base64), "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** The 32 bytes of CONVEYOR_SECRETS_KEY; other keys are derived from them (never used for AES directly). */
export function secretsKeyBytes(base64: string | undefined): Uint8Array<ArrayBuffer> {
  if (!base64) throw new SecretsKeyError("CONVEYOR_SECRETS_KEY is not configured");
  let raw: Uint8Array<ArrayBuffer>;
  try {
    raw = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  } catch {
    throw new SecretsKeyError("CONVEYOR_SECRETS_KEY is not valid base64");
  }
  if (raw.length !== 32) throw new SecretsKeyError("CONVEYOR_SECRETS_KEY must be 32 bytes (base64)");
  return raw;
}

const encoder = new TextEncoder();
const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

export async function seal(key: CryptoKey, owner: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(owner) },
    key,
    encoder.encode(plaintext),
  );
  return `${VERSION}:${toBase64(iv)}:${toBase64(new Uint8Array(sealed))}`;
}

export async function open(key: CryptoKey, owner: string, sealed: string): Promise<string> {
  const [version, iv, data] = sealed.split(":");
  if (version !== VERSION || !iv || !data) throw new Error("sealed secret has an unknown format");
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(iv), additionalData: encoder.encode(owner) },
    key,
    fromBase64(data),
  );
  return new TextDecoder().decode(plain);
}
