/** `vault list`, `vault approve`, `vault reject`: the vault's items and the operator's decisions on them. */
import { z } from "zod";
import { formatTime } from "../../src/dashboard/format.ts";
import { parseVaultId } from "../../src/domain/vault.ts";
import { command, projectOf } from "../command.ts";
import { table } from "../output.ts";
import { vaultItemSchema, vaultListSchema } from "../schemas.ts";

const itemId = z.string().transform((text, ctx) => {
  const id = parseVaultId(text);
  if (!id) ctx.addIssue({ code: "custom", message: "a vault item id looks like v7" });
  return id ?? "";
});

/** Who decided, or what the classifier said while it waits. */
function outcome(item: z.infer<typeof vaultItemSchema>): string {
  const decided = item.audit.findLast((e) => ["approved", "rejected", "expired"].includes(e.action));
  if (decided) return `${decided.action} by ${decided.by}${decided.reason ? `: ${decided.reason}` : ""}`;
  return item.verdict ? `classifier: ${item.verdict.verdict} (${item.verdict.reason})` : "not classified yet";
}

export const vaultList = command({
  name: "vault list",
  args: [],
  usage: "vault list [--project <id>] [--state <state>]",
  summary: "a project's vault items (or, without --project, the pending ones of every project)",
  options: { state: { type: "string" } },
  input: z.object({ state: z.enum(["pending", "approved", "fired", "rejected", "expired"]).optional() }),
  async run({ state }, ctx) {
    const path = ctx.project ? `/projects/${ctx.project}/vault${state ? `?state=${state}` : ""}` : "/vault";
    const list = await ctx.api.call("GET", path, vaultListSchema);
    const rows = list.items.map((i) => [
      ...(ctx.project ? [] : [i.project ?? ""]),
      i.id,
      i.kind,
      i.state,
      i.state === "pending" ? formatTime(i.expiresAt) : "",
      i.title,
      outcome(i),
    ]);
    const head = [...(ctx.project ? [] : ["PROJECT"]), "ID", "KIND", "STATE", "EXPIRES", "TITLE", "OUTCOME"];
    ctx.print(rows.length === 0 ? "no vault items" : table(head, rows), list);
  },
});

const decision = (verb: "approve" | "reject") =>
  command({
    name: `vault ${verb}`,
    args: ["id"],
    usage: `vault ${verb} <id> --project <id>${verb === "reject" ? " [--reason <text>]" : ""}`,
    summary:
      verb === "approve"
        ? "approve a pending vault item as the operator; it fires once"
        : "reject a pending vault item as the operator",
    options: { reason: { type: "string" } },
    input: z.object({ id: itemId, reason: z.string().min(1).max(500).optional() }),
    async run({ id, reason }, ctx) {
      const project = projectOf(ctx);
      const item = await ctx.api.call(
        "POST",
        `/projects/${project}/vault/${id}/${verb}`,
        vaultItemSchema,
        reason ? { reason } : {},
      );
      ctx.print(`${item.id} ${item.state}: ${outcome(item)}`, item);
    },
  });

export const vaultApprove = decision("approve");
export const vaultReject = decision("reject");
