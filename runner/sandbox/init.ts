/**
 * The sandbox's first process (run by the runner's Node inside bubblewrap). The sandbox has its own network
 * namespace with nothing but loopback; this makes the runner's proxies (Unix sockets bound in) reachable as
 * loopback TCP ports, then runs the session's command and exits with it, which ends every process left in
 * the sandbox. Imports only Node's own modules: nothing else of the runner is bound in.
 *
 *   node init.ts '{"forwards":[{"port":4100,"socket":"/…/model.sock"}],"command":"claude","args":[]}'
 *
 * With `"channel": true` the command is the session's controller (Claude Code) and its stdin and stdout, the
 * Agent SDK's channel, arrive on descriptors 4 and 5 instead: bubblewrap's own first process keeps only
 * stdio (here /dev/null), this one hands them to the command and closes its copies, so no process in the
 * sandbox but the non-dumpable controller holds the channel.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { connect, createServer } from "node:net";
import { constants } from "node:os";

type Spec = {
  forwards: { port: number; socket: string }[];
  command: string;
  args: string[];
  channel?: boolean;
};

/** Where the runner hands over the controller's stdin and stdout (bubblewrap's seccomp program is on 3). */
const CHANNEL_IN = 4;
const CHANNEL_OUT = 5;

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

const child = spec.channel ? spawnController() : spawn(spec.command, spec.args, { stdio: "inherit" });

/** Descriptors 3–5 of the command are /dev/null: the channel's inherited copies do not outlive the hand-over. */
function spawnController() {
  const nothing = openSync("/dev/null", "r+");
  const started = spawn(spec.command, spec.args, {
    stdio: [CHANNEL_IN, CHANNEL_OUT, "inherit", nothing, nothing, nothing],
  });
  for (const fd of [CHANNEL_IN, CHANNEL_OUT, nothing]) closeSync(fd);
  return started;
}
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
child.on("error", (error) => {
  process.stderr.write(`sandbox: cannot start ${spec.command}: ${error.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
