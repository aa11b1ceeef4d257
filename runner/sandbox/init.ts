/**
 * The sandbox's first process (run by the runner's Node inside bubblewrap). The sandbox has its own network
 * namespace with nothing but loopback; this makes the runner's proxies (Unix sockets bound in) reachable as
 * loopback TCP ports, then runs the session's command and exits with it, which ends every process left in
 * the sandbox. Imports only Node's own modules: nothing else of the runner is bound in.
 *
 *   node init.ts '{"forwards":[{"port":4100,"socket":"/…/model.sock"}],"command":"claude","args":[]}'
 */
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { constants } from "node:os";

type Spec = { forwards: { port: number; socket: string }[]; command: string; args: string[] };

const spec = JSON.parse(process.argv[2] ?? "") as Spec;

await Promise.all(
  spec.forwards.map(
    ({ port, socket }) =>
      new Promise<void>((ready, fail) => {
        const server = createServer((client) => {
          const upstream = connect(socket);
          client.pipe(upstream).pipe(client);
          client.on("error", () => upstream.destroy());
          upstream.on("error", () => client.destroy());
        });
        server.once("error", fail);
        server.listen(port, "127.0.0.1", () => {
          server.unref();
          ready();
        });
      }),
  ),
);

const child = spawn(spec.command, spec.args, { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
child.on("error", (error) => {
  process.stderr.write(`sandbox: cannot start ${spec.command}: ${error.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
