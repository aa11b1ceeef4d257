/**
 * workerd's own notes about its alarm scheduler ("NOSENTRY SQLite alarm overdue…", "…alarm handler canceled
 * with requestScheduledAlarm"): it reports an alarm that ran late or was moved while it ran, which a loaded
 * test machine makes ordinary and which says nothing about the code under test. The Workers plugin writes
 * workerd's log to this process's stderr after dropping its own list of such lines; these join that list, so
 * a green run's stderr holds only what a test or the code printed.
 */
const RUNTIME_NOTES = /^NOSENTRY SQLite alarm (overdue|handler canceled)/;

export function dropWorkerdAlarmNotes(): () => void {
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    const kept = text
      .split(/(?<=\n)/)
      .filter((line: string) => !RUNTIME_NOTES.test(line))
      .join("");
    if (kept !== "") return write(kept, ...rest);
    (rest.find((arg) => typeof arg === "function") as (() => void) | undefined)?.();
    return true;
  }) as typeof process.stderr.write;
  return () => {
    process.stderr.write = write;
  };
}
