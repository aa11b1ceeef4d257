/**
 * An issue's page shows records this object writes to D1 (the issue's jobs, usage, vault item) beside what
 * the issue's own object holds; the IssueDO holds the page's WebSocket. Once a batch is in D1, every issue it
 * touched is told, through the issue's contract, and its pages reload. Informational: a page that misses it
 * shows the records at its next reload.
 */
import type { IssueRecordTable } from "../../src/contracts/issue-object.ts";
import type { Requester } from "../../src/domain/vault.ts";
import type { Env } from "../../src/env.ts";
import { issueStub } from "../../src/issue-stub.ts";
import type { JobRecord } from "./d1-sink.ts";

type Touched = { project: string; number: number; tables: Set<IssueRecordTable> };

/** The issues whose records `records` changed, and which of their tables. Agent runs (issue 0) have no page. */
export function touchedIssues(records: readonly JobRecord[]): Touched[] {
  const touched = new Map<string, Touched>();
  const add = (project: string, number: number, table: IssueRecordTable) => {
    if (number <= 0) return;
    const key = `${project}#${number}`;
    const entry = touched.get(key) ?? { project, number, tables: new Set() };
    entry.tables.add(table);
    touched.set(key, entry);
  };
  for (const record of records) {
    switch (record.table) {
      case "jobs":
      case "usage":
        add(record.row.projectId, record.row.number, record.table);
        break;
      case "vault_items": {
        const requester = JSON.parse(record.row.requester) as Requester;
        if (requester.type === "issue") add(record.row.projectId, requester.issue, "vault_items");
        break;
      }
      case "worker_sessions":
        break;
    }
  }
  return [...touched.values()];
}

export async function tellIssuePages(env: Env, records: readonly JobRecord[]): Promise<void> {
  await Promise.allSettled(
    touchedIssues(records).map(({ project, number, tables }) =>
      issueStub(env, project, number).recordsChanged([...tables]),
    ),
  );
}
