/**
 * Applying `link_dependency`: the body gains a `Depends on #N` line, which the dependency parser
 * (src/domain/dependencies.ts) reads like any a human wrote, so the dependency gate holds the issue until #N
 * closes. Pure: the caller reads the body from the forge and writes the result back.
 */
import { parseDependencies } from "../domain/dependencies.ts";

const declares = (body: string, dependsOn: number) =>
  parseDependencies(body).some((ref) => ref.repo === null && ref.number === dependsOn);

/**
 * The body with the dependency declared: unchanged when it is already (a retry after a lost answer edits
 * nothing); null when no appended line would be read as one (the body ends inside an unclosed code fence).
 */
export function withDependency(body: string, dependsOn: number): string | null {
  if (declares(body, dependsOn)) return body;
  const trimmed = body.trimEnd();
  const linked = `${trimmed}${trimmed ? "\n\n" : ""}Depends on #${dependsOn}\n`;
  return declares(linked, dependsOn) ? linked : null;
}
