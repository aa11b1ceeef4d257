/**
 * A writer accepted the triage's proposal to split the issue: each part is filed once (a retry after a lost
 * answer finds it by Conveyor's hidden marker), labelled for the backlog and queued in the writer's name — the
 * text they accepted is its brief — and the issue names its parts before it is closed.
 */

import { commentOnce, policyOn } from "../../../src/forge/comment-once.ts";
import { openIssueOnce } from "../../../src/forge/issue-once.ts";
import { composePost, postTitle } from "../../../src/forge/post/post.ts";
import { conveyorAccount } from "../../../src/projects/account.ts";
import { triage } from "../../../src/projects/dispatch.ts";
import { toMirrored } from "../../../src/projects/gate.ts";
import { lazyForges } from "../../../src/projects/store.ts";
import type { Deliverers } from "./deliverers.ts";
import { posterOf } from "./forge.ts";

export const SPLIT_DELIVERERS: Deliverers = {
  split_issue: async (effect, ctx) => {
    const { project, poster } = await posterOf(ctx);
    const { number } = ctx.issue;
    const backlog = project.settings.labels.backlog;
    const forges = lazyForges(ctx.env, project);
    const filed: number[] = [];
    for (const [index, part] of effect.parts.entries()) {
      const key = `${ctx.key}:part:${index}`;
      const opened = await openIssueOnce(poster, key, backlog, {
        title: postTitle(poster.policy, part.title),
        body: composePost(poster.policy, [
          { conveyor: `Split from #${number}: its triage proposed this part, and ${effect.by} accepted it.` },
          { quote: part.body, by: "The triage wrote:" },
        ]),
        labels: [backlog],
      });
      filed.push(opened);
      // Conveyor's own label queues nothing: the writer who accepted the split queues the part.
      const issue = toMirrored(project, {
        number: opened,
        title: part.title,
        body: part.body,
        state: "open",
        labels: [backlog],
        // Filed under Conveyor's account, now.
        author: await conveyorAccount(ctx.env, project),
        createdAt: new Date().toISOString(),
      });
      const brief = { title: part.title, body: part.body, by: effect.by };
      const cause = { kind: "system" as const, id: ctx.key };
      await triage(ctx.env, project, issue, undefined, `${key}:queued`, cause, forges, undefined, brief);
    }
    const parts = filed.map((n) => `#${n}`).join(", ");
    await commentOnce(
      poster,
      number,
      `${ctx.key}:split`,
      composePost(await policyOn(poster, number), [
        {
          conveyor: `Split into ${parts}, as the triage proposed and ${effect.by} accepted; each is queued. Conveyor closes this issue.`,
        },
      ]),
    );
    return undefined;
  },
};
