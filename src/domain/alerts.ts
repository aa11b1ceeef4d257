/**
 * Alerts that leave the building (issue 30, docs/supervisor.md#the-operator-channel): what goes to the
 * operator's channel outside the forge, and how it is deduplicated and resolved. Pure: the factory's AlertDO
 * (durable-objects/alerts/) applies these decisions and delivers the messages from its outbox.
 *
 * Each source (a project's supervisor, the watchdog's look at one project) reports the whole set of alerts it
 * stands behind now. An alert is open while at least one source reports it: a runner finding has the same key
 * in every project its runner serves, so one silent runner serving three projects is one alert, resolved when
 * the last of them no longer finds it.
 */
import { type Check, type Finding, type Priority, RUNNER_CHECKS } from "./supervisor.ts";

export type Alert = {
  /** Names the cause: `runner_offline:<runner id>`, `<project>:issue_stuck:12:running`, `watchdog:<project>:alarm`. */
  key: string;
  priority: Priority;
  /** One line. */
  title: string;
  /** What is wrong and what to do; the operator's, so a runner's host figures may be in it. */
  text: string;
};

/**
 * An alert as a source reports it. With `confirm`, it opens only once its cause persists: reported in
 * `looks` reports in a row, or for `ms` since the first of them (src/domain/alert-streaks.ts).
 */
export type ReportedAlert = Alert & { confirm?: { looks: number; ms: number } };

/** What a source reports: every alert it stands behind now (none: all of its earlier ones are resolved). */
export type SourceReport = { source: string; alerts: ReportedAlert[] };

/** An open alert, as the AlertDO keeps it. */
export type OpenAlert = { alert: Alert; sources: string[]; openedAt: number };

/** A resolved one: `sources`, those that stood behind it last; `resolvedBy`, the report that resolved it. */
export type ResolvedAlert = OpenAlert & { resolvedAt: number; resolvedBy: string };

/** Resolved alerts the AlertDO keeps, newest first: a handful a day, so months of them. */
export const RESOLVED_KEPT = 200;

/** A project's supervisor reports as `project:<id>`, the watchdog's look at a project as `watchdog:<id>`. */
export const supervisorSource = (project: string) => `project:${project}`;
export const watchdogSource = (project: string) => `watchdog:${project}`;
/** A project's backfill of its mirror, refused by the forge (src/domain/backfill.ts). */
export const backfillSource = (project: string) => `backfill:${project}`;

const SOURCES = { project: "supervisor", watchdog: "watchdog", backfill: "backfill" } as const;

/** Who a source is, for a human; null for a source this version does not know. */
export function sourceOf(
  source: string,
): { by: (typeof SOURCES)[keyof typeof SOURCES]; project: string } | null {
  const match = /^(project|watchdog|backfill):(.+)$/.exec(source);
  if (!match?.[1] || !match[2]) return null;
  return { by: SOURCES[match[1] as keyof typeof SOURCES], project: match[2] };
}

/** What the operator's channel is told, once each: an alert opened, or resolved. */
export type AlertMessage = {
  kind: "opened" | "resolved";
  alert: Alert;
  openedAt: number;
  /** When it opened or resolved. */
  at: number;
};

export type AlertChanges = {
  opened: Alert[];
  /** Still open: their text refreshed, told nothing again. */
  kept: { alert: Alert; sources: string[] }[];
  resolved: OpenAlert[];
};

/** What one source's report changes, given the alerts open before it. */
export function reportChanges(open: readonly OpenAlert[], report: SourceReport): AlertChanges {
  const reported = new Map(report.alerts.map((a) => [a.key, a]));
  const changes: AlertChanges = { opened: [], kept: [], resolved: [] };
  for (const entry of open) {
    const alert = reported.get(entry.alert.key);
    const others = entry.sources.filter((s) => s !== report.source);
    if (alert) changes.kept.push({ alert, sources: [...others, report.source].sort() });
    else if (others.length > 0) changes.kept.push({ alert: entry.alert, sources: others });
    else changes.resolved.push(entry);
  }
  const known = new Set(open.map((e) => e.alert.key));
  for (const alert of reported.values()) if (!known.has(alert.key)) changes.opened.push(alert);
  return changes;
}

const RUNNER: ReadonlySet<Check> = new Set(RUNNER_CHECKS);

/** A finding about a runner: one alert per runner, however many projects it serves. */
export const isRunnerFinding = (finding: Pick<Finding, "check">) => RUNNER.has(finding.check);

/**
 * Whether a finding gets a forge issue on the project's tracker (where `supervisor.forgeIssues` is on): a runner
 * finding only when the factory has no operator channel to tell instead (else no one would hear of it).
 */
export const onTracker = (finding: Pick<Finding, "check">, operatorChannel: boolean) =>
  !(operatorChannel && isRunnerFinding(finding));

/** Priorities a project's finding must have to reach the operator's channel (a runner's go whatever theirs). */
const ALERTING: ReadonlySet<Priority> = new Set(["P0", "P1"]);

/**
 * The alerts a project's supervisor stands behind: its P0 and P1 findings, and its runner findings of any
 * priority. A runner finding's key is the runner's (the same from every project); a project's is prefixed by
 * the project.
 */
export function supervisorAlerts(project: string, findings: readonly Finding[]): Alert[] {
  return findings
    .filter((f) => isRunnerFinding(f) || ALERTING.has(f.priority))
    .map((f) => {
      const runner = isRunnerFinding(f);
      const title = runner ? f.summary : `${project}: ${f.summary}`;
      const text = [f.detail, f.remedy ? `Remedy under way: ${f.remedy.kind}.` : null]
        .filter((line): line is string => Boolean(line))
        .join("\n");
      return { key: runner ? f.key : `${project}:${f.key}`, priority: f.priority, title, text };
    });
}

/** Discord's limit on a message's `content`. */
const DISCORD_CONTENT_MAX = 2_000;

/** The message's words: a first line with the priority, then the text. */
export function messageText(message: AlertMessage): string {
  const { alert } = message;
  // A title may carry a runner's or a forge's words: kept to its one line.
  const title = alert.title.replace(/\s+/g, " ").trim();
  if (message.kind === "resolved") {
    return `Resolved [${alert.priority}] ${title} (open since ${iso(message.openedAt)})`;
  }
  return [`[${alert.priority}] ${title}`, alert.text].filter(Boolean).join("\n");
}

/**
 * The JSON body of a webhook call: `text` for Slack's incoming webhooks, `content` for Discord's (both ignore
 * the other's field), and `conveyor` with the whole message for any other receiver. The words may carry a
 * runner's or a forge's (a host name, an error): they mention nobody (Slack's `<!channel>` and `<@U…>` need
 * `<`, escaped as Slack asks; Discord parses no mention under an empty `allowed_mentions`).
 */
export function webhookBody(message: AlertMessage) {
  const words = messageText(message);
  return {
    text: words.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"),
    content: truncate(words, DISCORD_CONTENT_MAX),
    allowed_mentions: { parse: [] as string[] },
    conveyor: { id: `${message.alert.key}:${message.openedAt}:${message.kind}`, ...message },
  };
}

/** An email's subject (one line) and plain-text body. */
export function emailParts(message: AlertMessage): { subject: string; body: string } {
  const [first = "", ...rest] = messageText(message).split("\n");
  const subject = truncate(`Conveyor: ${first}`, 200);
  return { subject, body: [first, ...rest, "", `Alert: ${message.alert.key}`].join("\n") };
}

const truncate = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const iso = (ms: number) => new Date(ms).toISOString();
