import { redact as redactUrlCredentials } from "./git/exec.ts";

// Values shorter than this are not secrets worth hunting for in every log line (and would mangle text).
const MIN_SECRET_LENGTH = 8;
const PATTERNS: [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, "$1 ***"],
  [/\bsk-ant-[A-Za-z0-9_-]+/g, "sk-ant-***"],
];

/** The runner's secrets (tokens, keys), known by value, and the shapes of secrets it has never seen. */
export class Secrets {
  readonly #values = new Set<string>();

  add(...values: (string | undefined)[]): void {
    for (const value of values) if (value && value.length >= MIN_SECRET_LENGTH) this.#values.add(value);
  }

  redact(text: string): string {
    let out = text;
    // Longest first, so a secret that contains another is replaced whole.
    for (const value of [...this.#values].sort((a, b) => b.length - a.length)) {
      out = out.replaceAll(value, "***");
    }
    for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
    return redactUrlCredentials(out);
  }
}
