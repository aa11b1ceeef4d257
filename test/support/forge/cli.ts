import { parseArgs } from "node:util";
import { startLocalForge } from "./index.ts";

// node test/support/forge/cli.ts --data <dir> [--port <n>] [--host <address>] [--admin-token <token>]
//   [--repo <owner/name>[=<seed dir>]]... [--no-ci]
// Prints the forge's URL on the first line, then the API URL, the admin's login and token and each
// repository's clone URL; runs until SIGINT or SIGTERM.

const { values } = parseArgs({
  options: {
    data: { type: "string" },
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    "admin-token": { type: "string" },
    repo: { type: "string", multiple: true, default: [] },
    "no-ci": { type: "boolean", default: false },
  },
});

if (!values.data) {
  console.error(
    "usage: node test/support/forge/cli.ts --data <dir> [--port <n>] [--host <address>] [--admin-token <token>] [--repo <owner/name>[=<seed dir>]]... [--no-ci]",
  );
  process.exit(2);
}

const forge = await startLocalForge({
  dataDir: values.data,
  port: Number(values.port),
  host: values.host,
  admin: { token: values["admin-token"] },
  ci: { enabled: !values["no-ci"] },
});

const existing = new Set(forge.repos());
for (const spec of values.repo) {
  const [fullName = "", dir] = spec.split("=", 2);
  const [owner, name] = fullName.split("/");
  if (!owner || !name) throw new Error(`--repo ${spec}: expected owner/name[=dir]`);
  if (!existing.has(fullName)) await forge.createRepo({ owner, name, seed: dir ? { dir } : undefined });
}

console.log(forge.url);
console.log(`api: ${forge.apiUrl}`);
console.log(`admin: ${forge.admin.login} ${forge.admin.token}`);
for (const repo of forge.repos()) console.log(`repo: ${repo} ${forge.cloneUrl(repo, forge.admin.token)}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void forge.close().then(() => process.exit(0));
  });
}
