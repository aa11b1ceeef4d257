/**
 * Dangerous outputs: an agent's definition marks an output type `dangerous`, and each accepted output of that
 * type waits in the vault (an `agent_output` item) instead of being applied. Pure: which outputs are held, and
 * what a held output becomes once the vault decided it. The ProjectDO applies these (durable-objects/project/agents/runs.ts).
 */
import type { Decision } from "../domain/vault.ts";
import type { AgentDefinition } from "./definition.ts";
import type { OutputDecision, RequestedOutput } from "./outputs.ts";

/**
 * A decision as kept: an accepted output is `applied` once the forge took it, or carries `failed` (the
 * forge's refusal) when it never will; `vault` names the vault item a dangerous output waits in (or waited in).
 */
export type KeptDecision = OutputDecision & { applied?: boolean; failed?: string; vault?: string };

/** The indexes of the accepted outputs the vault must decide first: those of a type marked dangerous. */
export function heldOutputs(
  { outputs }: Pick<AgentDefinition, "outputs">,
  decisions: readonly OutputDecision[],
): number[] {
  return decisions.flatMap((decision, index) => {
    const { type } = decision.output;
    if (decision.status !== "accepted" || type === "noop") return [];
    return outputs[type]?.dangerous ? [index] : [];
  });
}

/** The vault's decision on an item: who made it and why. */
export type VaultVerdict = { itemId: string; decision: Decision; by: string; reason?: string };

/**
 * What a held output becomes on the vault's decision: approved, it stays accepted and is to be applied;
 * rejected or expired, it is rejected with the vault's reason. Null when the decision is not this output's to
 * take (not held by that item, or already settled): a repeated decision changes nothing.
 */
export function afterVault(
  decision: KeptDecision,
  verdict: VaultVerdict,
): { decision: KeptDecision; apply: boolean } | null {
  if (decision.status !== "accepted" || decision.vault !== verdict.itemId) return null;
  if (decision.applied || decision.failed !== undefined) return null;
  switch (verdict.decision) {
    case "approved":
      return { decision, apply: true };
    case "rejected": {
      const why = verdict.reason ? `: ${verdict.reason}` : "";
      const reason = `the vault rejected it (${verdict.itemId}, by ${verdict.by})${why}`;
      return { decision: { ...decision, status: "rejected", reason }, apply: false };
    }
    case "expired": {
      const reason = `the vault's ${verdict.itemId} expired with nobody deciding`;
      return { decision: { ...decision, status: "rejected", reason }, apply: false };
    }
  }
}

/** What an output asks for, in a line: its type and target (the dashboard's runs, a vault item's title). */
export function describeOutput(output: RequestedOutput): string {
  switch (output.type) {
    case "create_issue":
      return `create issue "${output.title}"`;
    case "comment":
      return `comment on #${output.issue}`;
    case "add_labels":
    case "remove_labels":
      return `${output.type.replace("_", " ")} ${output.labels.join(", ")} on #${output.issue}`;
    case "close_issue":
      return `close #${output.issue}`;
    case "link_dependency":
      return `#${output.issue} depends on #${output.dependsOn}`;
    case "submit_review":
      return `review #${output.pr}: ${output.verdict}`;
    case "propose_step":
      return `propose to ${output.step.kind} #${output.issue}`;
    case "noop":
      return `nothing to do: ${output.reason}`;
  }
}
