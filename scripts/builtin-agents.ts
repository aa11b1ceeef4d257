import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModule } from "../src/agents/builtin-module.ts";

const dir = new URL("../src/agents/builtin/", import.meta.url);
const files = Object.fromEntries(
  readdirSync(dir)
    .filter((file) => file.endsWith(".md"))
    .map((file) => [file.slice(0, -".md".length), readFileSync(new URL(file, dir), "utf8")]),
);
writeFileSync(new URL("../src/agents/builtin.generated.ts", import.meta.url), builtinModule(files));
