/**
 * The phase-file protocol: a session ends a phase by writing a file whose first line is `PHASE:<phase>`,
 * optionally followed by a `Reason: ...` line.
 *
 * Case policy: the first line must match exactly (`PHASE:` upper case, the phase lower case, no inner
 * spaces); only surrounding whitespace, CRLF/CR line ends and a UTF-8 BOM are tolerated. The phase drives the
 * lifecycle, so anything else (`phase:done`, `PHASE: done`, `PHASE:awaiting_ci_extra`) is reported as
 * `invalid` with the offending line rather than guessed at. The `Reason:` label is matched case-insensitively:
 * it only carries text for humans, and dropping an escalation reason over its spelling helps nobody.
 *
 * `PHASE:vault` (action sessions only) stops at a dangerous formula step until the vault decides; a `Step: <id>`
 * line names the step (matched like `Reason:`).
 *
 * `PHASE:needs_human` is the older protocol's word for `escalate` (agent instructions written for it still
 * say so): read as `escalate`, an alias and not a guess.
 */
export const PHASES = ["awaiting_ci", "awaiting_review", "escalate", "done", "failed", "vault"] as const;
export type Phase = (typeof PHASES)[number];

/** Older names a phase file may use, and the phase each stands for. */
export const PHASE_ALIASES: Readonly<Record<string, Phase>> = { needs_human: "escalate" };

export type PhaseSignal =
  /** No phase file, or one with nothing but whitespace: the session ended without a phase (counts as failed). */
  | { kind: "dry_exit" }
  | { kind: "invalid"; line: string }
  | { kind: "phase"; phase: Phase; reason?: string; step?: string };

export const MAX_REASON_CHARS = 2_000;
/** The offending line of an invalid file ends up in comments and logs; a runaway line must not. */
export const MAX_INVALID_LINE_CHARS = 200;

const PHASE_PREFIX = "PHASE:";
const REASON_LINE = /^reason:/i;
const STEP_LINE = /^step:\s*(\S+)\s*$/i;
/** A formula's step id (src/formulas/formula.ts); anything else on a Step line is not a step. */
const STEP_ID = /^[a-z][a-z0-9_-]{0,39}$/;

export function parsePhaseFile(text: string | null): PhaseSignal {
  // trim() also strips U+FEFF, which covers a UTF-8 BOM.
  if (text === null || text.trim() === "") return { kind: "dry_exit" };

  const [first = "", ...rest] = text.split(/\r\n|\r|\n/);
  const line = first.trim();
  const name = line.startsWith(PHASE_PREFIX) ? line.slice(PHASE_PREFIX.length) : undefined;
  const phase = PHASES.find((p) => p === name) ?? (name !== undefined ? aliasOf(name) : undefined);
  if (phase === undefined) return { kind: "invalid", line: truncate(line, MAX_INVALID_LINE_CHARS) };

  const lines = rest.map((l) => l.trim());
  const reasonLine = lines.find((l) => REASON_LINE.test(l));
  const reason = reasonLine?.slice("reason:".length).trim();
  const step = phase === "vault" ? stepOf(lines) : undefined;
  return {
    kind: "phase",
    phase,
    ...(reason ? { reason: truncate(reason, MAX_REASON_CHARS) } : {}),
    ...(step ? { step } : {}),
  };
}

/** The step a `PHASE:vault` file names on its first `Step:` line, if that is a step id. */
function stepOf(lines: string[]): string | undefined {
  const id = lines.map((l) => STEP_LINE.exec(l)?.[1]).find((m) => m !== undefined);
  return id !== undefined && STEP_ID.test(id) ? id : undefined;
}

const aliasOf = (name: string): Phase | undefined =>
  Object.hasOwn(PHASE_ALIASES, name) ? PHASE_ALIASES[name] : undefined;

/**
 * A session that judges its issue too vague or too large to implement ends with `PHASE:escalate` and a reason
 * starting `underspecified:`; the text after it is what the session needs answered. Null for any other reason.
 */
export function underspecifiedReason(reason: string | undefined): string | null {
  const match = reason === undefined ? null : /^underspecified\s*:\s*(.*)$/is.exec(reason.trim());
  if (!match) return null;
  return match[1]?.trim() || "no details given";
}

/** Cuts to at most `max` UTF-16 units with a trailing ellipsis, never splitting a surrogate pair. */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…`;
}
