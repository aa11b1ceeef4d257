import { writeFileSync } from "node:fs";
import { lifecycleDoc } from "../src/domain/lifecycle-diagram.ts";

writeFileSync(new URL("../docs/lifecycle.md", import.meta.url), lifecycleDoc());
