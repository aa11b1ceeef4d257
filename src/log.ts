/**
 * The Worker's and its objects' log: one JSON object a line, `msg` first, for Workers Logs to index. Tests
 * capture it instead of letting it print (test/worker/setup.ts): a test that expects a warning asserts on
 * it, and a failing test shows what was logged while it ran.
 */
export type LogLevel = "info" | "warn" | "error";
export type LogEntry = { level: LogLevel; msg: string; [field: string]: unknown };
export type LogSink = (entry: LogEntry) => void;

const toConsole: LogSink = ({ level, ...entry }) => {
  const line = JSON.stringify(entry);
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
};

let sink: LogSink = toConsole;

const write =
  (level: LogLevel) =>
  (msg: string, fields: Record<string, unknown> = {}) =>
    sink({ level, msg, ...fields });

export const log = { info: write("info"), warn: write("warn"), error: write("error") };

/** Where entries go from now on; null: the console again. */
export function setLogSink(next: LogSink | null): void {
  sink = next ?? toConsole;
}
