import type { Child } from "hono/jsx";
import type { IssueView } from "../../contracts/issue-object.ts";
import { findingSchema } from "../../critic/report.ts";
import type { ForgeLinks } from "../../forge/web-links.ts";
import { cacheHitRatio } from "../../usage/cache-hit.ts";
import type { VaultItemView } from "../../vault/queries.ts";
import { ActionButtons } from "../actions.tsx";
import { StackedBars } from "../charts.tsx";
import { formatRatio, formatTime, formatTokens, formatUsd } from "../format.ts";
import { StateBadge, When } from "../layout.tsx";
import type { IterationUsage, issueRecords } from "../queries.ts";
import { TriageProposal } from "./proposal.tsx";
import { History } from "./timeline.tsx";
import { VaultItems, vaultItemPath } from "./vault.tsx";

type Records = Awaited<ReturnType<typeof issueRecords>>;

const TOKEN_SERIES = [
  { name: "input", color: "#3b6ea8" },
  { name: "cache write", color: "#e0a030" },
  { name: "cache read", color: "#5aa469" },
  { name: "output", color: "#b0577a" },
];

/** Events of people on the pull request (docs/operating.md#people-on-the-pull-request). */
const PEOPLE_EVENTS = ["pr_review", "merge_command", "merge_held"];

export function IssuePage(props: {
  view: IssueView;
  records: Records;
  csrf: string;
  path: string;
  now: number;
  /** The forge's web pages of this project; null when the project is no longer registered. */
  links: ForgeLinks | null;
  /** Show the events the lifecycle table rejected (duplicates, late arrivals) in the timeline too. */
  showRejected: boolean;
  /** The vault items the issue asked for (a held merge, an action's steps), newest first. */
  vault: VaultItemView[];
}) {
  const { view, records, now, links, vault } = props;
  const applied = view.history.filter((h) => h.outcome === "applied");
  const ci = applied.filter((h) => h.event === "ci");
  const rejected = view.history.length - applied.length;
  // People's reviews and commands on the pull request, obeyed or not: those not obeyed say who and what.
  const people = view.history.filter((h) => PEOPLE_EVENTS.includes(h.event));
  return (
    <>
      <Summary view={view} records={records} now={now} links={links} csrf={props.csrf} path={props.path} />
      <ActionButtons
        project={view.project}
        number={view.number}
        state={view.state}
        csrf={props.csrf}
        next={props.path}
        inVault={vault.some((item) => item.state === "pending")}
      />
      <TriageProposal view={view} csrf={props.csrf} next={props.path} />
      {vault.length > 0 && (
        <>
          <h2>
            Vault <span class="count">{vault.length}</span>
          </h2>
          <VaultItems items={vault} csrf={props.csrf} now={now} next={props.path} />
        </>
      )}
      <h2>
        Session activity <span class="count">{view.activity.length}</span>
      </h2>
      <Activity items={view.activity} />
      <h2>Usage per iteration</h2>
      <Usage usage={records.usage} />
      <h2>
        CI attempts <span class="count">{ci.length}</span>
      </h2>
      <History entries={ci} empty="No CI result yet." links={links} />
      {people.length > 0 && (
        <>
          <h2>
            People on the pull request <span class="count">{people.length}</span>
          </h2>
          <History entries={people} empty="" links={links} />
        </>
      )}
      <h2>
        Critic rounds <span class="count">{records.criticReports.length}</span>
      </h2>
      <CriticReports reports={records.criticReports} links={links} />
      <h2>
        Jobs <span class="count">{records.jobs.length}</span>
      </h2>
      <Jobs jobs={records.jobs} now={now} />
      <h2>Timeline</h2>
      {rejected > 0 && (
        <p class="quiet">
          {props.showRejected ? (
            <a href={props.path}>Hide the {rejected} rejected events</a>
          ) : (
            <a href={`${props.path}?events=all`}>Show the {rejected} rejected events too</a>
          )}
        </p>
      )}
      <History entries={props.showRejected ? view.history : applied} empty="No events yet." links={links} />
    </>
  );
}

function Summary(props: {
  view: IssueView;
  records: Records;
  now: number;
  links: ForgeLinks | null;
  csrf: string;
  path: string;
}) {
  const { view, records, links } = props;
  const link = (text: string, href: string | undefined) => (href ? <a href={href}>{text}</a> : text);
  const facts: [string, Child | null][] = [
    ["title", records.forge?.title ?? null],
    [
      "on the forge",
      records.forge ? `${records.forge.state} · ${records.forge.labels.join(", ") || "no labels"}` : null,
    ],
    ["iteration", view.iteration],
    ["issue", link(`#${view.number}`, links?.issue(view.number))],
    ["branch", view.branch && link(view.branch, links?.branch(view.branch))],
    ["head", view.headSha && link(view.headSha.slice(0, 12), links?.commit(view.headSha))],
    [
      "pull request",
      view.prNumber === null ? null : link(`#${view.prNumber}`, links?.pullRequest(view.prNumber)),
    ],
    ["session", view.sessionId],
    [
      "vault item",
      view.vaultItem && (
        <a href={vaultItemPath(view.project, view.vaultItem)}>
          {view.vaultItem}
          {view.vaultStep ? ` (step ${view.vaultStep})` : ""}
        </a>
      ),
    ],
    ["CI fixes in a row", view.ciFixes],
    ["changes requested in a row", view.criticRounds],
    ["blocked by", view.blockers.join(", ") || null],
  ];
  return (
    <dl class="facts">
      <dt>state</dt>
      <dd>
        <StateBadge state={view.state} /> {view.reason && <span class="reason">{view.reason}</span>}
      </dd>
      {facts
        .filter(([, value]) => value !== null)
        .map(([name, value]) => (
          <>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </>
        ))}
      {view.timers.map((timer) => (
        <>
          <dt>{timer.kind} timer</dt>
          <dd>
            due {formatTime(timer.dueAt)} (<When at={timer.dueAt} now={props.now} />)
          </dd>
        </>
      ))}
      {view.outbox.map((o) => (
        <>
          <dt>outbox {o.channel}</dt>
          <dd>
            {o.pending} pending{o.lastError ? ` · last error: ${o.lastError}` : ""}
          </dd>
        </>
      ))}
      {(view.deadLetters ?? []).map((d) => (
        <>
          <dt>gave up on {d.kind}</dt>
          <dd>
            {formatTime(d.at)} after {d.attempts} attempt{d.attempts === 1 ? "" : "s"}: {d.error}
            <form method="post" action={`${props.path}/dead-letters/${d.id}/redeliver`} class="inline">
              <input type="hidden" name="csrf" value={props.csrf} />
              <button type="submit">Send again</button>
            </form>
          </dd>
        </>
      ))}
      {(view.droppedEffects ?? []).map((d) => (
        <>
          <dt>dropped {d.kind}</dt>
          <dd>
            {formatTime(d.at)}: {d.reason}
          </dd>
        </>
      ))}
    </dl>
  );
}

function Usage(props: { usage: IterationUsage[] }) {
  if (props.usage.length === 0) return <p class="quiet">No usage recorded yet.</p>;
  const totals = props.usage.reduce(
    (sum, u) => ({
      inputTokens: sum.inputTokens + u.inputTokens,
      outputTokens: sum.outputTokens + u.outputTokens,
      cacheReadTokens: sum.cacheReadTokens + u.cacheReadTokens,
      cacheWriteTokens: sum.cacheWriteTokens + u.cacheWriteTokens,
      usd: sum.usd + u.usd,
      turns: sum.turns + u.turns,
    }),
    { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, usd: 0, turns: 0 },
  );
  const row = (label: string, u: Omit<IterationUsage, "iteration">) => (
    <tr>
      <td>{label}</td>
      <td>{u.turns}</td>
      <td>{formatTokens(u.inputTokens)}</td>
      <td>{formatTokens(u.outputTokens)}</td>
      <td>{formatTokens(u.cacheReadTokens)}</td>
      <td>{formatTokens(u.cacheWriteTokens)}</td>
      <td>{formatRatio(cacheHitRatio(u))}</td>
      <td>{formatUsd(u.usd)}</td>
    </tr>
  );
  return (
    <>
      <StackedBars
        label="Tokens per iteration (cache-hit ratio above each bar)"
        series={TOKEN_SERIES}
        bars={props.usage.map((u) => ({
          label: `#${u.iteration}`,
          values: [u.inputTokens, u.cacheWriteTokens, u.cacheReadTokens, u.outputTokens],
          note: `${formatRatio(cacheHitRatio(u))} · ${formatUsd(u.usd)}`,
        }))}
        format={formatTokens}
      />
      <table class="numbers">
        <thead>
          <tr>
            <th>Iteration</th>
            <th>Turns</th>
            <th>Input</th>
            <th>Output</th>
            <th>Cache read</th>
            <th>Cache write</th>
            <th>Cache hit</th>
            <th>USD</th>
          </tr>
        </thead>
        <tbody>
          {props.usage.map((u) => row(`#${u.iteration}`, u))}
          {row("total", totals)}
        </tbody>
      </table>
    </>
  );
}

/** What the sessions were seen doing, newest last, as the runner reported it while they ran. */
function Activity(props: { items: IssueView["activity"] }) {
  if (props.items.length === 0) return <p class="quiet">No session activity yet.</p>;
  return (
    <ol class="activity">
      {props.items.map((item) => (
        <li class={`activity-${item.kind}`}>
          <time datetime={new Date(item.at).toISOString()}>{formatTime(item.at).slice(11, 19)}</time>{" "}
          <span class="kind">{item.kind}</span> <code>{item.text}</code>
        </li>
      ))}
    </ol>
  );
}

function CriticReports(props: { reports: Records["criticReports"]; links: ForgeLinks | null }) {
  if (props.reports.length === 0) return <p class="quiet">No critic report yet.</p>;
  return (
    <ol class="list">
      {props.reports.map((report) => {
        const findings = findingSchema.array().safeParse(report.findings);
        return (
          <li>
            <strong>
              Round {report.round}: {report.verdict}
            </strong>{" "}
            <small>
              {report.headSha &&
                (props.links ? (
                  <a href={props.links.commit(report.headSha)}>{report.headSha.slice(0, 12)}</a>
                ) : (
                  report.headSha.slice(0, 12)
                ))}{" "}
              · {formatTime(report.at)}
            </small>
            <p>{report.summary}</p>
            {findings.success && findings.data.length > 0 && (
              <ul>
                {findings.data.map((f) => (
                  <li>
                    [{f.severity}
                    {f.inScope ? "" : ", out of scope"}] {f.file}
                    {f.line ? `:${f.line}` : ""}: {f.comment}
                  </li>
                ))}
              </ul>
            )}
          </li>
        );
      })}
    </ol>
  );
}

function Jobs(props: { jobs: Records["jobs"]; now: number }) {
  if (props.jobs.length === 0) return <p class="quiet">No jobs yet.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Job</th>
          <th>Kind</th>
          <th>Status</th>
          <th>Attempt</th>
          <th>Runner</th>
          <th>Created</th>
          <th>Updated</th>
        </tr>
      </thead>
      <tbody>
        {props.jobs.map((job) => (
          <tr>
            <td>
              <code>{job.id}</code>
            </td>
            <td>{job.kind}</td>
            <td>{job.status}</td>
            <td>{job.attempt}</td>
            <td title={job.runnerId ?? undefined}>{job.runnerName ?? job.runnerId ?? "–"}</td>
            <td>{formatTime(job.createdAt)}</td>
            <td>
              <When at={job.updatedAt} now={props.now} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
