/**
 * One vault item's classification (src/vault/classifier.ts) under the project's written policy, and what the
 * call spent, for the item's issue (or the project alone, for an agent run's item).
 */
import type { BudgetLimits } from "../../src/domain/budget.ts";
import { DEFAULT_VAULT_POLICY, type VaultItem, type VaultPolicy } from "../../src/domain/vault.ts";
import type { Env } from "../../src/env.ts";
import { budgetLimits } from "../../src/projects/config.ts";
import { fileReaderOf, loadRegistered, type Registered } from "../../src/projects/store.ts";
import type { ModelUsage } from "../../src/usage/sources.ts";
import { type Classified, classify } from "../../src/vault/classifier.ts";
import { DEFAULT_VAULT_POLICY_TEXT, VAULT_POLICY_DIR, VAULT_POLICY_FILE } from "../../src/vault/policy.ts";

/** The model the classifier asks unless the Worker's `VAULT_MODEL` names another. */
export const DEFAULT_VAULT_MODEL = "claude-sonnet-5-5";
/** How many files of `.conveyor/` are read looking for the policy. */
const POLICY_DIR_FILES = 20;

export type ItemClassified = Pick<Classified, "verdict"> & {
  policy: VaultPolicy;
  usage: ModelUsage;
  /** The project's budgets, when it is registered: the item's issue may be over its budget now. */
  budget: BudgetLimits | null;
};

export async function classifyItem(env: Env, project: string, item: VaultItem): Promise<ItemClassified> {
  const registered = await loadRegistered(env, project);
  const model = env.VAULT_MODEL ?? DEFAULT_VAULT_MODEL;
  const { verdict, usage } = await classify(
    {
      ...(env.ANTHROPIC_API_KEY && { apiKey: env.ANTHROPIC_API_KEY }),
      ...(env.ANTHROPIC_BASE_URL && { baseURL: env.ANTHROPIC_BASE_URL }),
      model,
    },
    { repo: registered?.project.repo ?? project, policy: await policyText(registered), item },
  );
  const settings = registered?.project.settings;
  const { requester } = item;
  return {
    verdict,
    policy: settings ? { autoApprove: settings.vault.autoApprove } : DEFAULT_VAULT_POLICY,
    // Outside an iteration: 0. An item's classification runs once (the outbox row), so its id is the item's.
    usage: {
      id: `classifier:${project}:${item.id}`,
      number: requester.type === "issue" ? requester.issue : null,
      iteration: 0,
      source: "classifier",
      model,
      tokens: usage,
    },
    budget: settings ? budgetLimits(settings) : null,
  };
}

async function policyText(registered: Registered | null): Promise<string> {
  if (!registered) return DEFAULT_VAULT_POLICY_TEXT;
  try {
    const forge = fileReaderOf(registered.project, await registered.secrets());
    const files = await forge.readDirectory(
      VAULT_POLICY_DIR,
      registered.project.settings.defaultBranch,
      POLICY_DIR_FILES,
    );
    return files.get(VAULT_POLICY_FILE)?.trim() || DEFAULT_VAULT_POLICY_TEXT;
  } catch {
    return DEFAULT_VAULT_POLICY_TEXT;
  }
}
