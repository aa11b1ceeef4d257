/**
 * Every child process the harnesses start (wrangler dev, a runner, the local forge's CI scripts), registered
 * so that none outlives its starter whichever step of a start failed: a `beforeAll` that timed out leaves its
 * start running on in the background, with no handle for the file's `afterAll` to stop. The file's teardown
 * (test/node/setup.ts) and this process's exit kill what is still registered; a child registered after the
 * teardown (a start that went on) is killed as it is registered.
 */
import type { ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";

type Child = { child: ChildProcess; group: boolean };

const live = new Set<Child>();
let closed = false;

/** Says `track` with each child registered (tests wait on it rather than on a timer). */
export const registered = new EventEmitter<{ track: [ChildProcess] }>();

/**
 * Registers `child`. `group`: it leads its own process group (spawned `detached`), and the whole group goes
 * with it: what it started (wrangler's workerd) may outlive the leader. A child alone is forgotten when it exits.
 */
export function track(child: ChildProcess, { group = false }: { group?: boolean } = {}): void {
  const entry = { child, group };
  if (closed) {
    kill(entry);
    return;
  }
  live.add(entry);
  if (!group) child.once("exit", () => live.delete(entry));
  registered.emit("track", child);
}

/**
 * Ends a child its starter is done with, once its leader has exited: what still runs in its group is killed,
 * and it is forgotten (a group's id may be reused after that).
 */
export function end(child: ChildProcess): void {
  for (const entry of live) {
    if (entry.child !== child) continue;
    kill(entry);
    live.delete(entry);
  }
}

/**
 * Kills (SIGKILL) every registered child still running, each group whole; with `close`, so is any child
 * registered from now on. Synchronous, so a process's `exit` can call it. Returns the pids it was left with.
 */
export function killTracked({ close = false }: { close?: boolean } = {}): number[] {
  if (close) closed = true;
  const left = [...live].flatMap((entry) => (kill(entry) ? [entry.child.pid ?? 0] : []));
  live.clear();
  return left;
}

function kill({ child, group }: Child): boolean {
  const { pid } = child;
  if (pid === undefined) return false;
  try {
    // A group's leader may have exited with its members still running: the group is killed either way.
    if (group) process.kill(-pid, "SIGKILL");
    else if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    else return false;
    return true;
  } catch {
    // Gone already (ESRCH).
    return false;
  }
}

process.once("exit", () => killTracked({ close: true }));
