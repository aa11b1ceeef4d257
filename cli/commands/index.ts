/**
 * Every command of `conveyor`, in the order `--help` lists them. A command of two words (`project add`)
 * belongs to the group its first word names, which gets `conveyor <group> --help` without anything more: a
 * new command is one module and one entry here.
 */
import type { Command } from "../command.ts";
import { agentList, agentRun, agentShow } from "./agent.ts";
import { costs } from "./costs.ts";
import { health } from "./health.ts";
import { abandon, approve, issueList, issueShow, redeliver, retry } from "./issue.ts";
import { outcomes } from "./outcomes.ts";
import { projectAdd, projectList, projectRemove, projectSet, projectShow } from "./project.ts";
import { runnerRevoke, runnerToken, status } from "./status.ts";
import { vaultApprove, vaultList, vaultReject } from "./vault.ts";

export const COMMANDS: Command[] = [
  projectAdd,
  projectList,
  projectShow,
  projectSet,
  projectRemove,
  runnerToken,
  runnerRevoke,
  status,
  costs,
  outcomes,
  issueList,
  issueShow,
  approve,
  retry,
  abandon,
  redeliver,
  agentList,
  agentRun,
  agentShow,
  vaultList,
  vaultApprove,
  vaultReject,
  health,
];
