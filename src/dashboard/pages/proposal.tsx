/**
 * The triage's proposed next step for the issue's escalation (docs/agents.md, triage), and beside it the
 * operator's Accept: the same `accept` event a writer's `/conveyor accept` sends, through the operator path.
 */
import type { IssueView } from "../../contracts/issue-object.ts";
import { acceptRefusal, type ProposedStep, stepWords } from "../../domain/escalation.ts";
import { ActionForm } from "../actions.tsx";

export function TriageProposal(props: { view: IssueView; csrf: string; next: string }) {
  const { view } = props;
  const { proposal } = view;
  if (!proposal) return null;
  const { name, accepting } = stepWords(proposal.step);
  const refusal = acceptRefusal({
    state: view.state,
    proposal,
    escalation: view.escalation ?? null,
  });
  return (
    <section class="proposal">
      <h2>Triage's proposal</h2>
      <dl class="facts">
        <dt>proposed step</dt>
        <dd>
          <strong>{name}</strong>
        </dd>
        <dt>what went wrong</dt>
        <dd>{proposal.diagnosis}</dd>
        <StepDetail step={proposal.step} />
        <dt>by</dt>
        <dd>
          <code>{proposal.agent}</code> (run <code>{proposal.runId}</code>), for escalation{" "}
          {proposal.escalation}
        </dd>
      </dl>
      {refusal === null ? (
        <>
          <p class="quiet">Accepting it: {accepting}.</p>
          <ActionForm
            project={view.project}
            number={view.number}
            csrf={props.csrf}
            next={props.next}
            actions={["accept"]}
          />
        </>
      ) : (
        <p class="quiet">Not to accept now: {refusal}.</p>
      )}
    </section>
  );
}

function StepDetail(props: { step: ProposedStep }) {
  const { step } = props;
  switch (step.kind) {
    case "retry":
      return (
        <>
          <dt>hint for the next session</dt>
          <dd>{step.hint}</dd>
        </>
      );
    case "clarify":
      return (
        <>
          <dt>question for the author</dt>
          <dd>{step.question}</dd>
        </>
      );
    case "split":
      return (
        <>
          <dt>parts</dt>
          <dd>
            <ol>
              {step.parts.map((part) => (
                <li>{part.title}</li>
              ))}
            </ol>
          </dd>
        </>
      );
    case "abandon":
      return null;
  }
}
