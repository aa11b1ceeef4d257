/** Strips secrets from text a runner asks the Worker to log: values it knows, and shapes of tokens it does not. */
import { TOKEN_PREFIXES } from "./registry.ts";

// Shorter values are not secrets worth hunting for (and would mangle ordinary text).
const MIN_SECRET_LENGTH = 8;

const PATTERNS: [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, "$1 ***"],
  [
    new RegExp(
      `\\b(sk-ant-|gh[pousr]_|github_pat_|glpat-|lease_|${Object.values(TOKEN_PREFIXES).join("|")})[A-Za-z0-9_-]+`,
      "g",
    ),
    "$1***",
  ],
  // Credentials in URLs: https://user:secret@host
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:)[^\s/@]+@/gi, "$1***@"],
  [/\b((?:api[_-]?key|secret|password|passwd|token)["']?\s*[:=]\s*["']?)[^\s"',;]+/gi, "$1***"],
];

export function redact(text: string, known: readonly (string | undefined)[] = []): string {
  let out = text;
  // Longest first, so a secret that contains another is replaced whole.
  const values = known.filter((v): v is string => v !== undefined && v.length >= MIN_SECRET_LENGTH);
  for (const value of values.sort((a, b) => b.length - a.length)) out = out.replaceAll(value, "***");
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
