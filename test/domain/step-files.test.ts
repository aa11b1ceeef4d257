import { describe, expect, it } from "vitest";
import { commandPaths, filesChanged, MAX_COMMAND_PATHS } from "../../src/formulas/step-files.ts";

describe("commandPaths", () => {
  it.each([
    ["./scripts/rotate.sh", ["scripts/rotate.sh"]],
    ["./rotate.sh --env production", ["rotate.sh"]],
    ["bash scripts/rotate.sh && python3 tools/report.py", ["scripts/rotate.sh", "tools/report.py"]],
    ["sh \"./a.sh\"; cat 'b/c.txt' | ./d.sh > out.log", ["a.sh", "b/c.txt", "d.sh", "out.log"]],
    ["././x.sh ./x.sh x.sh", ["x.sh"]],
    ["npm run rotate", []],
    ["echo rotated; exit 3", []],
    ['echo "token is $DEPLOY_TOKEN" > $HOME/x', []],
    ["cat /etc/passwd ../up.sh a/../b.sh scripts/*.sh -c.sh --file=x.sh $HOME/x.sh", []],
  ])("%s names %j", (command, paths) => {
    expect(commandPaths(command)).toEqual(paths);
  });

  it("looks up at most MAX_COMMAND_PATHS words", () => {
    const command = Array.from({ length: 30 }, (_, i) => `f${i}.sh`).join(" ");
    expect(commandPaths(command)).toHaveLength(MAX_COMMAND_PATHS);
  });
});

describe("filesChanged", () => {
  const a = "a".repeat(40);
  const b = "b".repeat(40);
  const commit = "0123456789abcdef0123456789abcdef01234567";

  it("is null for the same files in any order", () => {
    expect(filesChanged({ "x.sh": a, "y.sh": b }, { "y.sh": b, "x.sh": a }, commit)).toBeNull();
    expect(filesChanged({}, {}, commit)).toBeNull();
  });

  it("names each file that changed, is new or is gone, and the approved commit", () => {
    expect(filesChanged({ "x.sh": a, "gone.sh": a }, { "x.sh": b, "new.sh": a }, commit)).toBe(
      "gone.sh is gone, new.sh is new, x.sh changed since the vault approved it at commit 0123456789ab",
    );
  });
});
