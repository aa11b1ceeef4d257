import { ROTATION_WINDOW_MS } from "../../domain/supervisor-checks.ts";
import { describePressure } from "../../runner-api/pressure.ts";
import type { listRunners } from "../../runner-api/registry.ts";
import { formatBytes, formatTime } from "../format.ts";
import { issuePath, When } from "../layout.tsx";
import { agentsPath } from "./agents.tsx";

type Runner = Awaited<ReturnType<typeof listRunners>>[number];

export const revokePath = (runnerId: string) => `/dashboard/runners/${encodeURIComponent(runnerId)}/revoke`;

/** A runner without a sandbox runs sessions with the host's rights: nobody should miss it. */
function Sandbox(props: { sandbox: Runner["sandbox"] }) {
  if (props.sandbox === "none") return <strong class="unsafe">OFF (--unsafe-no-sandbox)</strong>;
  return <>{props.sandbox ?? <span class="quiet">unknown</span>}</>;
}

/**
 * Busy, idle, or offline and since when: stopped (it said so) or silent (killed, its host down). A runner
 * holding back (runner/backpressure.ts) says why and since when: it claims nothing until its host recovers.
 */
function Status(props: { runner: Runner; now: number }) {
  const { presence, pressure, pressureSince } = props.runner;
  if (presence.status !== "offline")
    return (
      <>
        <span class={`presence presence-${presence.status}`}>{presence.status}</span>
        {pressure && (
          <>
            {" "}
            <span class="presence presence-held">holding back</span>{" "}
            <small>
              {describePressure(pressure)}
              {pressureSince !== null && (
                <>
                  {" "}
                  since <When at={pressureSince} now={props.now} />
                </>
              )}
            </small>
          </>
        )}
      </>
    );
  return (
    <>
      <span class="presence presence-offline">offline</span>{" "}
      <small>
        {presence.stopped ? "stopped" : "silent since"} <When at={presence.since} now={props.now} />
      </small>
    </>
  );
}

/** What its work dir holds: a runner whose worktrees pile up shows it here first. */
function Disk(props: { bytes: number | null; worktrees: number | null; freeBytes: number | null }) {
  if (props.bytes === null || props.worktrees === null) return <span class="quiet">not reported</span>;
  return (
    <>
      {formatBytes(props.bytes)}, {props.worktrees} {props.worktrees === 1 ? "worktree" : "worktrees"}
      {props.freeBytes !== null && <small> ({formatBytes(props.freeBytes)} free)</small>}
    </>
  );
}

/** Available memory and load, as last recorded (the supervisor's inputs, docs/supervisor.md). */
function Host(props: { runner: Runner }) {
  const { memAvailableBytes, memTotalBytes, load1, cpus } = props.runner;
  if (memAvailableBytes === null || memTotalBytes === null) return <span class="quiet">not reported</span>;
  return (
    <>
      {formatBytes(memAvailableBytes)} of {formatBytes(memTotalBytes)} free
      {load1 !== null && cpus !== null && (
        <small>
          {" "}
          · load {load1} on {cpus} CPUs
        </small>
      )}
    </>
  );
}

/**
 * Where its calls come from, and a rotation of its token from an address it had not been seen at (a stolen
 * token rotating itself): the operator's to see, never a forge's (docs/operating.md#runners).
 */
function Address(props: { runner: Runner; now: number }) {
  const { address, suspectRotation: rotation, supersededSeenAt } = props.runner;
  const recent = rotation !== null && props.now - rotation.at <= ROTATION_WINDOW_MS;
  return (
    <>
      {address ?? <span class="quiet">unknown</span>}
      {recent && (
        <strong class="unsafe">
          {" "}
          token rotated {formatTime(rotation.at)} from {rotation.from} (seen before at {rotation.before})
          {supersededSeenAt !== null && supersededSeenAt >= rotation.at
            ? `; the replaced token was presented ${formatTime(supersededSeenAt)}`
            : ""}
        </strong>
      )}
    </>
  );
}

export function Runners(props: { runners: Runner[]; now: number; csrf: string }) {
  if (props.runners.length === 0)
    return <p>No runners registered: `conveyor runner token` makes a token for one.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Runner</th>
          <th>Status</th>
          <th>Version</th>
          <th>Sandbox</th>
          <th>Projects</th>
          <th>Last seen</th>
          <th>Address</th>
          <th>Disk</th>
          <th>Memory</th>
          <th>Current jobs</th>
          <th>Token expires</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.runners.map((runner) => (
          <tr>
            <td>
              {runner.name} <small>{runner.id}</small>
            </td>
            <td>
              <Status runner={runner} now={props.now} />
            </td>
            <td>{runner.version}</td>
            <td>
              <Sandbox sandbox={runner.sandbox} />
            </td>
            <td>{runner.projects?.join(", ") ?? <span class="quiet">any</span>}</td>
            <td>
              <When at={runner.lastSeenAt} now={props.now} />
            </td>
            <td>
              <Address runner={runner} now={props.now} />
            </td>
            <td>
              <Disk bytes={runner.diskBytes} worktrees={runner.worktrees} freeBytes={runner.diskFreeBytes} />
            </td>
            <td>
              <Host runner={runner} />
            </td>
            <td>
              {runner.jobs.length === 0 ? (
                <span class="quiet">none</span>
              ) : (
                runner.jobs.map((job) => (
                  <span class="job">
                    {/* An agent run is about no issue (its number is 0): it links to the project's agents. */}
                    {job.kind === "agent" ? (
                      <a href={agentsPath(job.project)}>{job.project}</a>
                    ) : (
                      <a href={issuePath(job.project, job.number)}>
                        {job.project}#{job.number}
                      </a>
                    )}{" "}
                    {job.kind}
                    {job.attempt > 1 ? ` (attempt ${job.attempt})` : ""}
                  </span>
                ))
              )}
            </td>
            <td>{formatTime(runner.expiresAt)}</td>
            <td>
              <form method="post" action={revokePath(runner.id)}>
                <input type="hidden" name="csrf" value={props.csrf} />
                <button type="submit" class="action-revoke">
                  Revoke
                </button>
              </form>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
