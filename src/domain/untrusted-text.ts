/**
 * Untrusted text (issues, comments, CI logs, diffs, findings) placed inside a prompt's tags: `<`, `>` and `&`
 * are escaped as entities, so no text can close the tag that marks it as data or open one of its own. Pure.
 */
const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

export const asData = (text: string): string => text.replace(/[&<>]/g, (c) => ENTITIES[c] ?? c);
