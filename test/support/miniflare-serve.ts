/**
 * The built Worker under Miniflare, with no dev proxy in front of it (started by miniflare-worker.ts, in a
 * process group of its own). Reads `{ stateDir, port, inspectorPort, vars, preventEviction }` as JSON on
 * stdin (the bindings stay off the command line), bundles the Worker as `wrangler deploy` does, serves it
 * with wrangler.toml's bindings and its D1 and Durable Objects persisted where `wrangler dev --persist-to
 * stateDir` keeps them, and prints `ready <url>` once it answers.
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { text } from "node:stream/consumers";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { z } from "zod";

// The Miniflare (and workerd) wrangler itself runs `wrangler dev` on, not the vitest plugin's at the top of
// node_modules: the same runtime as startLocalWorker's.
const { convertV4MiniflareOptions, Log, LogLevel, Miniflare } = (await import(
  pathToFileURL(createRequire(import.meta.resolve("wrangler")).resolve("miniflare")).href
)) as typeof import("miniflare");

const ROOT = new URL("../../", import.meta.url).pathname;

const Input = z.object({
  stateDir: z.string(),
  port: z.number().int(),
  inspectorPort: z.number().int(),
  vars: z.record(z.string(), z.string()),
  preventEviction: z.boolean(),
});
const { stateDir, port, inspectorPort, vars, preventEviction } = Input.parse(
  JSON.parse(await text(process.stdin)),
);

// The deploy's own bundle (esbuild's `// path` module markers kept: the CPU profile's owners read them).
const outdir = join(stateDir, "build");
await promisify(execFile)(
  process.execPath,
  [join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", outdir],
  { cwd: ROOT, env: process.env, maxBuffer: 16 * 2 ** 20 },
);
// The bundle is one module: the config's rules for further modules have nothing to find.
const { modulesRules: _, ...workerOptions } = unstable_getMiniflareWorkerOptions(
  join(ROOT, "wrangler.toml"),
).workerOptions;
// Idle objects are evicted after some seconds, as on Cloudflare; a bench that holds every object it touched in
// memory at once keeps them.
const durableObjects = Object.fromEntries(
  Object.entries(workerOptions.durableObjects ?? {}).map(([binding, options]) => [
    binding,
    typeof options === "string" ? options : { ...options, unsafePreventEviction: preventEviction },
  ]),
);
const mf = new Miniflare(
  convertV4MiniflareOptions({
    ...workerOptions,
    durableObjects,
    name: "conveyor",
    rootPath: ROOT,
    modules: true,
    scriptPath: join(outdir, "index.js"),
    modulesRoot: outdir,
    bindings: vars,
    host: "127.0.0.1",
    port,
    inspectorPort,
    // Offline: no request for the `cf` object's data.
    cf: false,
    resourcePersistencePath: join(stateDir, "v3"),
    log: new Log(LogLevel.WARN),
  } as Parameters<typeof convertV4MiniflareOptions>[0]),
);
const url = await mf.ready;
process.stdout.write(`ready ${url.origin}\n`);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void mf.dispose().finally(() => process.exit(0)));
