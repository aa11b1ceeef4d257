/**
 * Claude Code, made non-dumpable. Everything in a sandbox runs as one uid, and on a kernel without Yama (or
 * with `ptrace_scope` 0) a process may write the memory (`/proc/<pid>/mem`) of any dumpable process of its
 * uid: the model's commands, and the code under review they run, could rewrite Claude Code and speak for the
 * session on its channel to the runner. The kernel makes a process non-dumpable when it executes a file it
 * cannot read, so the sandbox runs a copy of the binary that may be executed and not read (mode 0111, owned by
 * the runner's user, read-only in the sandbox, where no capability is left to read it anyway). The copy is made
 * once per binary (its size, modification time and inode name it) in a directory of the runner's own, under
 * the binary's own name (Claude Code's behaviour may depend on it).
 */
import { randomBytes } from "node:crypto";
import { lstatSync } from "node:fs";
import { chmod, copyFile, mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

const PREFIX = "claude-";
const EXECUTE_ONLY = 0o111;

/** Where the SDK finds Claude Code: its platform package's binary, the C library's build first. */
export function bundledClaudeCode(): string {
  const require = createRequire(import.meta.url);
  const base = `@anthropic-ai/claude-agent-sdk-linux-${process.arch}`;
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  const musl = report.header?.glibcVersionRuntime === undefined;
  for (const name of musl ? [`${base}-musl`, base] : [base, `${base}-musl`]) {
    try {
      return require.resolve(`${name}/claude`);
    } catch {
      // Not installed for this platform.
    }
  }
  throw new Error(`Claude Code is not installed for linux-${process.arch} (${base})`);
}

/**
 * A directory only this user can write: under the shared temporary directory, one that another user made
 * first (or a symlink) would hand them the binary every session runs, so it is refused.
 */
export function defaultControllerDir(): string {
  return join(tmpdir(), `conveyor-controller-${process.getuid?.() ?? 0}`);
}

/** The execute-only copy of `binary` in `dir`, made if missing; older copies there are removed. */
export async function executeOnlyCopy(binary: string, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  ownDirectory(dir);
  const source = await stat(binary);
  const version = `${PREFIX}${source.size}-${Math.trunc(source.mtimeMs)}-${source.ino}`;
  const target = join(dir, version, basename(binary));
  const made = async () => {
    const copy = await stat(target).catch(() => null);
    return copy?.isFile() === true && copy.size === source.size && (copy.mode & 0o777) === EXECUTE_ONLY;
  };
  if (await made()) return target;
  // Made aside and renamed into place whole: a runner killed while copying leaves no half binary to run.
  const partial = join(dir, `.${version}.${randomBytes(6).toString("hex")}`);
  try {
    await mkdir(partial, { mode: 0o755 });
    await copyFile(binary, join(partial, basename(binary)));
    await chmod(join(partial, basename(binary)), EXECUTE_ONLY);
    await rm(join(dir, version), { recursive: true, force: true });
    // Another process making the same copy may have won the race: its copy serves as well.
    await rename(partial, join(dir, version)).catch(async (error: unknown) => {
      if (!(await made())) throw error;
    });
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  for (const entry of await readdir(dir)) {
    if (entry.startsWith(PREFIX) && entry !== version)
      await rm(join(dir, entry), { recursive: true, force: true });
  }
  return target;
}

function ownDirectory(dir: string): void {
  const stats = lstatSync(dir);
  const uid = process.getuid?.() ?? 0;
  if (!stats.isDirectory() || stats.uid !== uid || (stats.mode & 0o022) !== 0) {
    throw new Error(`${dir} must be a directory of uid ${uid} that no one else may write`);
  }
}
