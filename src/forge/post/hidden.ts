/**
 * An issue's body as a person sees it, for a prompt: HTML comments, which the forge hides from readers but
 * hands to whoever reads the raw text (the next agent), removed; so are invisible characters and Conveyor's
 * markers (./characters.ts). Comments shown in code stay: a reader sees those. Pure.
 */
import type { Nodes } from "mdast";
import { visibleText } from "./characters.ts";
import { parse } from "./defuse.ts";

export function shownText(markdown: string): string {
  const text = visibleText(markdown);
  if (!text.includes("<!--")) return text;
  const cuts: { start: number; end: number }[] = [];
  const visit = (node: Nodes) => {
    if (node.type === "html") {
      const start = node.position?.start.offset ?? 0;
      const source = text.slice(start, node.position?.end.offset ?? start);
      for (const m of source.matchAll(/<!--[\s\S]*?(?:-->|$)/g))
        cuts.push({ start: start + m.index, end: start + m.index + m[0].length });
    } else if ("children" in node) node.children.forEach(visit);
  };
  visit(parse(text));
  let out = text;
  for (const cut of cuts.reverse()) out = out.slice(0, cut.start) + out.slice(cut.end);
  return out;
}
