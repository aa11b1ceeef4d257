/**
 * The boundary schema of a triage agent's proposed next step (src/domain/escalation.ts): what the agent may ask
 * for through its `propose_step` output, and what the object takes in a `triage_proposal` event.
 */
import { z } from "zod";
import type { Proposal, ProposedStep } from "../domain/escalation.ts";

const words = (max: number) => z.string().trim().min(1).max(max);

/** A split is into a few parts: more is a backlog of its own, for a human to plan. */
export const MAX_PARTS = 5;

export const proposedStepSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("retry"), hint: words(2_000) }),
  z.object({
    kind: z.literal("split"),
    parts: z
      .array(z.object({ title: words(200), body: words(8_000) }))
      .min(2)
      .max(MAX_PARTS),
  }),
  z.object({ kind: z.literal("clarify"), question: words(2_000) }),
  z.object({ kind: z.literal("abandon") }),
]) satisfies z.ZodType<ProposedStep>;

export const diagnosisSchema = words(2_000);

export const proposalSchema = z.object({
  escalation: z.number().int().positive(),
  runId: z.string().min(1).max(100),
  agent: z.string().min(1).max(40),
  diagnosis: diagnosisSchema,
  step: proposedStepSchema,
}) satisfies z.ZodType<Proposal>;
