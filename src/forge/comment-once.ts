import type { ForgeClient } from "./client/index.ts";

/** Marks Conveyor's own comments: a retry finds the first post, and the hook route skips them. */
export const commentMarker = (key: string) => `<!-- conveyor:${key} -->`;

export const isConveyorComment = (body: string) => body.includes("<!-- conveyor:");

/** Posts once under `key`: a retry after a lost response finds the first post instead of adding one. */
export async function commentOnce(forge: ForgeClient, number: number, key: string, body: string) {
  const marker = commentMarker(key);
  const existing = await forge.listComments(number);
  if (existing.some((c) => c.body.includes(marker))) return;
  await forge.comment(number, `${body}\n\n${marker}`);
}
