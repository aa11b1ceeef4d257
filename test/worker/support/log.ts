/**
 * The Worker's log during the worker tests (test/worker/setup.ts installs it): what the code under test logs is
 * kept here instead of printed. A test that expects an entry asserts on `logged`; a failing test prints what
 * was logged while it ran, so nothing that could explain a failure is lost.
 */
import { beforeEach } from "vitest";
import { type LogEntry, setLogSink } from "../../../src/log.ts";

/** The entries logged since the current test started (by any object of the isolate). */
export const logged: LogEntry[] = [];

export function captureLog(): void {
  setLogSink((entry) => logged.push(entry));
  beforeEach(({ onTestFailed }) => {
    logged.length = 0;
    onTestFailed(() => {
      for (const entry of logged) console.error(JSON.stringify(entry));
    });
  });
}
