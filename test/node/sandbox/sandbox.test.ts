import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bubblewrapArgs, probeSandbox } from "../../../runner/sandbox/bubblewrap.ts";
import { hostAllowed } from "../../../runner/sandbox/egress-proxy.ts";
import { OAUTH_BETA } from "../../../runner/sandbox/model-proxy.ts";
import { outputOf } from "../../../runner/sandbox/output.ts";
import { type Place, Sandbox } from "../../../runner/sandbox/session-sandbox.ts";
import { text } from "../../support/model/script.ts";
import { type ModelStandIn, startModelStandIn } from "../../support/model/server.ts";
import { tempDir } from "../git/support.ts";

const MODEL_KEY = "sk-ant-sandbox-test-key-0042";
const OAUTH_TOKEN = "sk-ant-oat01-sandbox-test-subscription-0042";
const sha256 = (secret: string) => createHash("sha256").update(secret).digest("hex");

let root = "";
let place: Place;
let hostServer: Server;
let hostPort = 0;
let standIn: ModelStandIn;

beforeAll(async () => {
  root = await tempDir("sandbox");
  place = { worktree: join(root, "wt"), writable: [join(root, "home")], readOnly: [join(root, "objects")] };
  for (const dir of [place.worktree, ...place.writable, ...place.readOnly])
    await mkdir(dir, { recursive: true });
  await writeFile(join(root, "objects", "pack"), "borrowed objects\n");
  await writeFile(join(root, "runner-secret"), "the runner's secret\n");
  hostServer = createServer((_req, res) => res.end("host service\n"));
  await new Promise<void>((ready) => hostServer.listen(0, "127.0.0.1", ready));
  hostPort = (hostServer.address() as AddressInfo).port;
  standIn = await startModelStandIn({ script: () => text("hello from the model") });
});

afterAll(async () => {
  hostServer.close();
  await standIn.close();
  await rm(root, { recursive: true, force: true });
});

const sandbox = () => new Sandbox({ mode: "bubblewrap", model: {}, secretFiles: [] });

/** Runs `sh -c script` in the sandbox; resolves with its exit code and output. */
async function sh(box: Sandbox, script: string, env: Record<string, string> = {}) {
  const child = box.spawn(place, "sh", ["-c", script], { env: { PATH: "/usr/bin:/bin", ...env } });
  const { code, stdout, stderr } = await outputOf(child);
  return { code, output: stdout + stderr };
}

describe("bubblewrap's arguments", () => {
  it("recreates system symlinks, binds parents before children and masks secret files last", () => {
    const args = bubblewrapArgs([{ path: "/usr" }, { path: "/bin", symlink: "usr/bin" }], {
      writable: ["/w/agents/x/home", "/w/tree"],
      readOnly: ["/w/agents/x/home/.sub/objects", "/w"],
      masked: ["/etc/runner.json"],
      cwd: "/w/tree",
    });
    const line = args.join(" ");
    expect(line).toContain("--unshare-all --die-with-parent --new-session --cap-drop ALL");
    expect(line).toContain("--seccomp 3");
    expect(line).toContain("--ro-bind /usr /usr --symlink usr/bin /bin");
    expect(line.indexOf("--ro-bind /w /w")).toBeLessThan(line.indexOf("--bind /w/tree /w/tree"));
    expect(line.indexOf("--bind /w/agents/x/home")).toBeLessThan(
      line.indexOf("--ro-bind /w/agents/x/home/.sub"),
    );
    expect(line).toMatch(/--ro-bind-try \/dev\/null \/etc\/runner\.json --chdir \/w\/tree$/);
  });

  it("runs a root runner's sandbox as uid 1000, anyone else's as themselves", () => {
    const mounts = { writable: [], readOnly: [], masked: [], cwd: "/" };
    expect(bubblewrapArgs([], mounts, 0).join(" ")).toContain("--cap-drop ALL --uid 1000 --gid 1000");
    expect(bubblewrapArgs([], mounts, 1001)).not.toContain("--uid");
  });
});

describe("a sandboxed process", { timeout: 20_000 }, () => {
  it("can start here", async () => {
    expect(await probeSandbox()).toBeNull();
  });

  it("writes its worktree and home, reads borrowed objects, and sees nothing else of the host", async () => {
    const { code, output } = await sh(
      sandbox(),
      [
        "echo work > file && cat file",
        `echo home > ${place.writable[0]}/file && echo wrote-home`,
        `cat ${root}/objects/pack`,
        `echo nope > ${root}/objects/pack || echo objects-read-only`,
        `cat ${root}/runner-secret || echo no-runner-secret`,
        "ls /home /root /var 2>&1 | head -3",
      ].join("; "),
    );
    expect(code).toBe(0);
    expect(output).toContain("work\nwrote-home\nborrowed objects\n");
    expect(output).toContain("objects-read-only");
    expect(output).toContain("no-runner-secret");
    expect(output).not.toContain("the runner's secret");
    expect(output).toMatch(/\/home.*No such file/);
  });

  it("holds no capability and runs as a non-zero uid, so it cannot remount a read-only bind to write through it", async () => {
    const objects = join(root, "objects");
    const { output } = await sh(
      sandbox(),
      [
        "id -u",
        "grep -E '^Cap(Eff|Prm|Bnd):' /proc/self/status",
        `mount -o remount,rw,bind ${objects} ${objects} 2>/dev/null && echo remounted`,
        `echo overwritten > ${objects}/pack 2>/dev/null || echo still-read-only`,
      ].join("; "),
    );
    const [uid] = output.split("\n");
    expect(Number(uid)).toBeGreaterThan(0);
    for (const set of ["CapEff", "CapPrm", "CapBnd"]) expect(output).toMatch(new RegExp(`${set}:\\s+0+\\n`));
    expect(output).not.toContain("remounted");
    expect(output).toContain("still-read-only");
    expect(await readFile(join(objects, "pack"), "utf8")).toBe("borrowed objects\n");
  });

  it("has its own process tree: the host's processes are out of sight, and what it leaves dies with it", async () => {
    const { output } = await sh(
      sandbox(),
      "ls /proc | grep -c '^[0-9]'; setsid sh -c 'sleep 30' sandbox-test-orphan > /dev/null 2>&1 & echo left",
    );
    const [count] = output.trim().split("\n");
    expect(Number(count)).toBeLessThan(10);
    expect(output).toContain("left");
    expect(() => execFileSync("pgrep", ["-f", "sandbox-test-orphan"])).toThrow();
  });

  it("has no network: not even the host's loopback", async () => {
    const { output } = await sh(
      sandbox(),
      `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${hostPort}' && echo reached || echo refused`,
    );
    expect(output).toContain("refused");
    expect(output).not.toContain("reached");
  });

  it("cannot read the runner's secret files where the system view would show them", async () => {
    const file = `/etc/conveyor-sandbox-test-${process.pid}.json`;
    await writeFile(file, "secret in etc\n", { mode: 0o600 });
    try {
      const box = new Sandbox({ mode: "bubblewrap", model: {}, secretFiles: [file] });
      const { output } = await sh(box, `cat ${file}; echo end`);
      expect(output).toContain("end\n");
      expect(output).not.toContain("secret in etc");
    } finally {
      await rm(file, { force: true });
    }
  });
});

describe("a sandboxed session's model proxy", { timeout: 20_000 }, () => {
  const call = (token: string) =>
    `node -e 'fetch("http://127.0.0.1:41001/v1/messages",{method:"POST",headers:{"x-api-key":"${token}","content-type":"application/json"},body:JSON.stringify({model:"claude-sonnet-4-5",max_tokens:20,messages:[{role:"user",content:"hi"}]})}).then(async r=>console.log(r.status,await r.text()))'`;

  it("forwards with the real key, meters the answer, refuses a wrong token and refuses past the budget", async () => {
    const box = new Sandbox({
      mode: "bubblewrap",
      model: { baseUrl: standIn.url, apiKey: MODEL_KEY },
      secretFiles: [],
    });
    const reports: number[] = [];
    const session = await box.open(place, {
      budgetUsd: 0.000_5,
      allowedDomains: [],
      onUsage: (usage) => reports.push(usage.turns),
    });
    try {
      const spawn = (script: string) => {
        const child = session.spawn("sh", ["-c", script], {
          env: { PATH: process.env.PATH ?? "", ...session.env },
        });
        child.stdin?.end();
        let output = "";
        child.stdout?.on("data", (chunk: Buffer) => {
          output += chunk.toString();
        });
        return new Promise<string>((done) => child.on("close", () => done(output)));
      };
      const token = session.env.ANTHROPIC_API_KEY ?? "";
      expect(token).not.toBe(MODEL_KEY);
      expect(await spawn(call("wrong"))).toMatch(/^401 .*invalid session token/);
      expect(await spawn(call(token))).toMatch(/^200 .*hello from the model/);
      expect(session.usage.turns).toBe(1);
      expect(session.usage.usd).toBeGreaterThan(0);
      expect(reports).toEqual([1]);
      expect(await spawn(call(token))).toMatch(/^400 .*budget is spent/);
      expect(session.budgetRefused).toBe(true);
      const upstream = standIn.requests.filter((r) => r.path === "/v1/messages");
      expect(upstream).toHaveLength(1);
      // The key went upstream (the stand-in keeps its digest); the sandbox never had it.
      expect(upstream[0]?.credential).toEqual({ scheme: "x-api-key", sha256: sha256(MODEL_KEY) });
      expect(JSON.stringify(session.env)).not.toContain(MODEL_KEY);
    } finally {
      await session.close();
    }
  });

  it("signs in upstream with a subscription's OAuth token instead, which the session never sees", async () => {
    const box = new Sandbox({
      mode: "bubblewrap",
      model: { baseUrl: standIn.url, oauthToken: OAUTH_TOKEN },
      secretFiles: [],
    });
    const session = await box.open(place, { budgetUsd: 1, allowedDomains: [] });
    try {
      const before = standIn.requests.length;
      const child = session.spawn("sh", ["-c", call(session.env.ANTHROPIC_API_KEY ?? "")], {
        env: { PATH: process.env.PATH ?? "", ...session.env },
      });
      child.stdin?.end();
      const { stdout } = await outputOf(child);
      expect(stdout).toMatch(/^200 .*hello from the model/);
      const [upstream] = standIn.requests.slice(before);
      expect(upstream?.credential).toEqual({ scheme: "bearer", sha256: sha256(OAUTH_TOKEN) });
      expect(upstream?.headers["anthropic-beta"]).toContain(OAUTH_BETA);
      expect(JSON.stringify(session.env)).not.toContain(OAUTH_TOKEN);
    } finally {
      await session.close();
    }
  });

  it("opens tunnels only to allowed domains on port 443", async () => {
    expect(hostAllowed("registry.npmjs.org", ["registry.npmjs.org"])).toBe(true);
    expect(hostAllowed("Registry.NPMJS.org.", ["registry.npmjs.org"])).toBe(true);
    expect(hostAllowed("files.pythonhosted.org", ["*.pythonhosted.org"])).toBe(true);
    expect(hostAllowed("pythonhosted.org", ["*.pythonhosted.org"])).toBe(false);
    expect(hostAllowed("evilnpmjs.org", ["npmjs.org"])).toBe(false);
    expect(hostAllowed("registry.npmjs.org.evil.com", ["registry.npmjs.org"])).toBe(false);

    const session = await sandbox().open(place, { budgetUsd: 1, allowedDomains: ["registry.npmjs.org"] });
    try {
      const connect = (authority: string) =>
        `node -e 'require("http").request({host:"127.0.0.1",port:41002,method:"CONNECT",path:"${authority}"}).on("connect",r=>{console.log(r.statusCode);process.exit(0)}).on("error",e=>console.log(e.message)).end()'`;
      const child = session.spawn(
        "sh",
        [
          "-c",
          `${connect(`127.0.0.1:${hostPort}`)}; ${connect("registry.npmjs.org:22")}; echo "$HTTPS_PROXY"`,
        ],
        { env: { PATH: process.env.PATH ?? "", ...session.env } },
      );
      child.stdin?.end();
      let output = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      await new Promise((done) => child.on("close", done));
      expect(output).toBe("403\n403\nhttp://127.0.0.1:41002\n");
    } finally {
      await session.close();
    }
  });
});
