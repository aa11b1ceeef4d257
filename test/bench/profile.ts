/**
 * Where the local Worker's JavaScript time goes, by owner: a V8 CPU profile of the Worker's isolate (its
 * routes and its Durable Objects; D1 runs in an isolate of its own) taken through the DevTools inspector
 * (wrangler's, or workerd's own under Miniflare), each sample put to the innermost owner on its stack (the ProjectDO's modules, the IssueDO's, the
 * Worker's) by the bundle's module markers (esbuild's `// path` line before each module). The same inspector
 * reads the isolate's heap.
 */
type CallFrame = { functionName: string; scriptId: string; url: string; lineNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
type Profile = {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
};

/** Owners by the paths of their modules, in the order a sample is given to them. */
const OWNERS: [string, RegExp][] = [
  ["project_do", /^durable-objects\/project\//],
  ["issue_do", /^durable-objects\/issue\//],
  ["other_do", /^durable-objects\//],
  ["worker", /^src\//],
];

const WORKER_TARGET = "core:user:conveyor";

export type ProfileShares = {
  wallMs: number;
  busyMs: number;
  byOwner: Record<string, number>;
  /** The frames with the most time of their own (`function module`), most first: where to look next. */
  hottest: [string, number][];
};

export class WorkerProfiler {
  readonly #socket: WebSocket;
  #id = 0;
  readonly #pending = new Map<number, (result: unknown) => void>();
  readonly #scripts = new Map<string, string>();

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.addEventListener("message", (message) => {
      const data = JSON.parse(String(message.data)) as {
        id?: number;
        method?: string;
        params?: { scriptId: string; url: string };
      };
      if (data.id !== undefined) this.#pending.get(data.id)?.((data as { result?: unknown }).result);
      else if (data.method === "Debugger.scriptParsed" && data.params)
        this.#scripts.set(data.params.scriptId, data.params.url);
    });
  }

  /** The isolate's V8 heap after a full collection, in bytes: what its live objects hold, and allocated. */
  static async heap(inspectorPort: number): Promise<{ usedSize: number; totalSize: number }> {
    const inspector = await WorkerProfiler.#open(inspectorPort);
    try {
      await inspector.#send("HeapProfiler.collectGarbage");
      return (await inspector.#send("Runtime.getHeapUsage")) as { usedSize: number; totalSize: number };
    } finally {
      inspector.close();
    }
  }

  static async connect(inspectorPort: number): Promise<WorkerProfiler> {
    const profiler = await WorkerProfiler.#open(inspectorPort);
    await profiler.#send("Debugger.enable");
    await profiler.#send("Profiler.enable");
    await profiler.#send("Profiler.setSamplingInterval", { interval: 500 });
    return profiler;
  }

  static async #open(inspectorPort: number): Promise<WorkerProfiler> {
    const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as {
      id: string;
      webSocketDebuggerUrl: string;
    }[];
    // wrangler's inspector lists the Worker alone; workerd's own (under Miniflare) every service, the
    // Worker's as `core:user:<name>`.
    const target = targets.find((t) => t.id === WORKER_TARGET) ?? targets[0];
    if (!target) throw new Error("the Worker's inspector lists no target");
    // The inspector takes DevTools from a local origin only.
    const socket = new WebSocket(target.webSocketDebuggerUrl, {
      headers: { origin: "http://127.0.0.1" },
    } as unknown as string[]);
    await new Promise((opened, failed) => {
      socket.addEventListener("open", opened, { once: true });
      socket.addEventListener("error", failed, { once: true });
    });
    return new WorkerProfiler(socket);
  }

  start(): Promise<unknown> {
    return this.#send("Profiler.start");
  }

  /** Stops the profile: the window's wall time, the samples' busy time, and each owner's share of the wall. */
  async stop(): Promise<ProfileShares> {
    const { profile } = (await this.#send("Profiler.stop")) as { profile: Profile };
    const modules = new Map<string, { line: number; path: string }[]>();
    for (const scriptId of new Set(profile.nodes.map((node) => node.callFrame.scriptId))) {
      if (!this.#scripts.has(scriptId)) continue;
      const { scriptSource } = (await this.#send("Debugger.getScriptSource", { scriptId })) as {
        scriptSource: string;
      };
      modules.set(scriptId, moduleMarkers(scriptSource));
    }
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const parent = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    // A sample belongs to the first owner of OWNERS anywhere on its stack: the ProjectDO's pure decisions
    // (src/domain) are the ProjectDO's time; code of nobody's (libraries, the bundle's glue) is the runtime's.
    const rank = new Map<number, number>();
    const rankOf = (id: number): number => {
      const known = rank.get(id);
      if (known !== undefined) return known;
      const node = byId.get(id) as ProfileNode;
      const path = moduleAt(modules.get(node.callFrame.scriptId), node.callFrame.lineNumber);
      const own = path === undefined ? -1 : OWNERS.findIndex(([, pattern]) => pattern.test(path));
      const up = parent.get(id);
      const found = Math.min(own === -1 ? OWNERS.length : own, up === undefined ? OWNERS.length : rankOf(up));
      rank.set(id, found);
      return found;
    };
    const SPECIAL = new Set(["(idle)", "(program)", "(garbage collector)"]);
    const owner = (id: number): string => {
      const name = byId.get(id)?.callFrame.functionName ?? "";
      return SPECIAL.has(name) ? name : (OWNERS[rankOf(id)]?.[0] ?? "runtime");
    };
    const byOwner: Record<string, number> = {};
    const self = new Map<string, number>();
    profile.samples.forEach((sample, i) => {
      const key = owner(sample);
      const ms = (profile.timeDeltas[i] ?? 0) / 1000;
      byOwner[key] = (byOwner[key] ?? 0) + ms;
      const frame = byId.get(sample)?.callFrame;
      if (!frame || SPECIAL.has(frame.functionName)) return;
      const name = `${frame.functionName || "(anonymous)"} ${moduleAt(modules.get(frame.scriptId), frame.lineNumber) ?? frame.url}`;
      self.set(name, (self.get(name) ?? 0) + ms);
    });
    const hottest = [...self].sort((a, b) => b[1] - a[1]).slice(0, 15);
    const wallMs = (profile.endTime - profile.startTime) / 1000;
    const busyMs = wallMs - (byOwner["(idle)"] ?? 0);
    return { wallMs, busyMs, byOwner, hottest };
  }

  close(): void {
    this.#socket.close();
  }

  #send(method: string, params: object = {}): Promise<unknown> {
    const id = ++this.#id;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
  }
}

/** esbuild's `// path/to/module.ts` lines, in order, with their line numbers (0-based, as profiles count). */
function moduleMarkers(source: string): { line: number; path: string }[] {
  const markers: { line: number; path: string }[] = [];
  source.split("\n").forEach((text, line) => {
    const match = /^\/\/ ((?:\.\.\/)*[\w@./-]+\.[cm]?[jt]sx?)$/.exec(text);
    if (match?.[1]) markers.push({ line, path: match[1].replace(/^(\.\.\/)+/, "") });
  });
  return markers;
}

function moduleAt(markers: { line: number; path: string }[] | undefined, line: number): string | undefined {
  if (!markers) return undefined;
  let low = 0;
  let high = markers.length - 1;
  let found: string | undefined;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const marker = markers[mid] as { line: number; path: string };
    if (marker.line <= line) {
      found = marker.path;
      low = mid + 1;
    } else high = mid - 1;
  }
  return found;
}
