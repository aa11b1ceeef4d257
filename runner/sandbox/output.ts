import type { ChildProcess } from "node:child_process";

export type Output = { code: number | null; stdout: string; stderr: string };

/** Ends the child's stdin and resolves with its exit code and output once it closes. */
export function outputOf(child: ChildProcess): Promise<Output> {
  child.stdin?.end();
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
