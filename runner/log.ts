import type { Secrets } from "./redact.ts";

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFields = Record<string, unknown>;
/** Receives a job's log lines of interest (info and above), already redacted. */
export type LogForward = (level: LogLevel, message: string) => void;

type LoggerOptions = {
  level: LogLevel;
  secrets: Secrets;
  write?: (line: string) => void;
  fields?: LogFields;
  forward?: LogForward;
};

const FORWARD_FROM: LogLevel = "info";

/** Structured JSON lines (one object per line) on stderr, every string redacted. */
export class Logger {
  readonly #options: LoggerOptions;

  constructor(options: LoggerOptions) {
    this.#options = options;
  }

  /** A logger that adds `fields` to every line and, with `forward`, also hands lines to it. */
  child(fields: LogFields, forward?: LogForward): Logger {
    const parent = this.#options;
    return new Logger({
      ...parent,
      fields: { ...parent.fields, ...fields },
      forward: forward ?? parent.forward,
    });
  }

  debug(message: string, fields?: LogFields): void {
    this.#log("debug", message, fields);
  }

  info(message: string, fields?: LogFields): void {
    this.#log("info", message, fields);
  }

  warn(message: string, fields?: LogFields): void {
    this.#log("warn", message, fields);
  }

  error(message: string, fields?: LogFields): void {
    this.#log("error", message, fields);
  }

  #log(level: LogLevel, message: string, fields: LogFields = {}): void {
    const { secrets, write = writeStderr, forward } = this.#options;
    const toStderr = rank(level) >= rank(this.#options.level);
    const toForward = forward !== undefined && rank(level) >= rank(FORWARD_FROM);
    if (toStderr) {
      const line = {
        time: new Date().toISOString(),
        level,
        msg: message,
        ...this.#options.fields,
        ...fields,
      };
      write(secrets.redact(JSON.stringify(line, errorsAsText)));
    }
    if (toForward) {
      const detail = Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields, errorsAsText)}` : "";
      forward(level, secrets.redact(`${message}${detail}`));
    }
  }
}

function rank(level: LogLevel): number {
  return LOG_LEVELS.indexOf(level);
}

function writeStderr(line: string): void {
  process.stderr.write(`${line}\n`);
}

// JSON.stringify turns an Error into `{}`.
function errorsAsText(_key: string, value: unknown): unknown {
  return value instanceof Error ? value.message : value;
}
