/**
 * The CLI's help and its refusals of bad usage: all before it asks the Worker anything, so no Worker runs here
 * (its URL is one nothing answers on). cli.test.ts runs the commands against a real Worker.
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../../cli/commands/index.ts";
import { bin, inProcess } from "./support.ts";

const NOWHERE = "http://127.0.0.1:9";
const { ok, fails } = inProcess(() => ({ CONVEYOR_URL: NOWHERE, CONVEYOR_TOKEN: "token" }));

describe.concurrent("refusals", () => {
  it.each([
    ["no URL", ["status"], { CONVEYOR_URL: undefined }, 2, /set --url or CONVEYOR_URL/],
    ["no token", ["status"], { CONVEYOR_TOKEN: undefined }, 2, /set CONVEYOR_TOKEN or --token-file/],
    [
      "a token on the command line",
      ["status", "--token", "x"],
      {},
      2,
      /unknown option --token \(the operator token comes from CONVEYOR_TOKEN or --token-file/,
    ],
    ["an unreachable Worker", ["status"], {}, 1, /cannot reach http:\/\/127\.0\.0\.1:9/],
    ["an unknown command", ["deploy"], {}, 2, /unknown command: deploy \(see conveyor --help\)/],
    [
      "an unknown command of a group",
      ["project", "frob"],
      {},
      2,
      /command: project frob \(see conveyor project --help\)/,
    ],
    [
      "an unknown flag",
      ["status", "--verbose"],
      {},
      2,
      /^conveyor: unknown option --verbose; usage: conveyor status\n$/,
    ],
    [
      "a flag without its value",
      ["runner", "token", "--ttl"],
      {},
      2,
      /^conveyor: --ttl needs a value; usage: /,
    ],
    ["a value for a switch", ["status", "--json=yes"], {}, 2, /^conveyor: --json takes no value; usage: /],
    ["a negative number where it cannot be", ["runner", "token", "--ttl", "-5"], {}, 2, /^conveyor: ttl: /],
    ["a command that needs a project", ["issue", "show", "40"], {}, 2, /needs --project/],
    [
      "an issue number that is none",
      ["approve", "forty", "--project", "p"],
      {},
      2,
      /number: the issue number must be a number/,
    ],
    [
      "an argument too few",
      ["approve", "--project", "p"],
      {},
      2,
      /expected 1 argument\(s\); usage: conveyor approve <number>/,
    ],
  ] as const)("%s", async (_, args, env, code, message) => {
    await fails([...args], code, message, env);
  });
});

describe("help", () => {
  it("--help lists every command and exits 0", async () => {
    const out = await ok(["--help"]);
    expect(out).toMatch(/^usage: conveyor <command>/);
    for (const { name } of COMMANDS) expect(out).toMatch(new RegExp(`^  ${name}\\b`, "m"));
  });

  it("every group has its help: its own commands, however asked", async () => {
    const groups = [
      ...new Set(COMMANDS.filter((c) => c.name.includes(" ")).map((c) => c.name.split(" ")[0] ?? "")),
    ];
    expect(groups).toEqual(["project", "runner", "issue", "agent", "vault"]);
    for (const group of groups) {
      const out = await ok([group, "--help"]);
      expect(out).toMatch(new RegExp(`^usage: conveyor ${group} <command> `));
      const listed = [...out.matchAll(/^ {2}(\S+ \S+)/gm)].map((m) => m[1]);
      expect(listed).toEqual(COMMANDS.filter((c) => c.name.startsWith(`${group} `)).map((c) => c.name));
      expect(await ok([group])).toBe(out);
      expect(await ok(["help", group])).toBe(out);
      expect(await ok([group, "-h"])).toBe(out);
    }
  });

  it("a command's help, however asked", async () => {
    const out = await ok(["project", "set", "--help"]);
    expect(out).toMatch(/^usage: conveyor project set <key> <value> --project <id>\n {2}change one setting/);
    expect(await ok(["help", "project", "set"])).toBe(out);
    expect(await ok(["costs", "-h"])).toMatch(/^usage: conveyor costs \[--project <id>\] \[--days <n>\]/);
  });
});

describe("as a process", () => {
  it("--version prints the package's version, without a Worker to ask", async () => {
    const { version } = JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8"));
    expect(await bin(["--version"])).toEqual({ code: 0, stdout: `conveyor ${version}\n`, stderr: "" });
  });

  it("bad usage exits 2 with one line on stderr", async () => {
    expect(
      await bin(["project", "set", "parallel", "-1"], { CONVEYOR_URL: NOWHERE, CONVEYOR_TOKEN: "t" }),
    ).toEqual({
      code: 2,
      stdout: "",
      stderr: "conveyor: this command needs --project (or CONVEYOR_PROJECT)\n",
    });
  });
});
