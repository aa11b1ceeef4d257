/**
 * The diff hunk a review comment points into, as Gitea cuts it when the comment is made
 * (`git.CutDiffAroundLine`, `ui.CODE_COMMENT_LINES` = 4): the lines of the hunk up to the commented one of the
 * new file, at most `before` of them ahead of it, under a header counted for what is kept. Empty when the
 * diff has no such line.
 */
export function cutHunk(diff: string, path: string, line: number, before = 4): string {
  const lines = fileSection(diff, path);
  let kept: { text: string; old: number; new: number }[] = [];
  let oldLine = 0;
  let newLine = 0;
  for (const text of lines) {
    const header = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text);
    if (header) {
      oldLine = Number(header[1]);
      newLine = Number(header[2]);
      kept = [];
      continue;
    }
    const mark = text[0];
    if (mark !== " " && mark !== "+" && mark !== "-") continue;
    kept.push({ text, old: oldLine, new: newLine });
    if (mark !== "+") oldLine++;
    if (mark === "-") continue;
    if (newLine === line) return withHeader(kept.slice(-(before + 1)));
    newLine++;
  }
  return "";
}

function fileSection(diff: string, path: string): string[] {
  const sections = diff.split(/^(?=diff --git )/m);
  const section = sections.find((s) => s.startsWith("diff --git ") && s.includes(`\n+++ b/${path}\n`));
  return section?.split("\n") ?? [];
}

function withHeader(lines: { text: string; old: number; new: number }[]): string {
  const first = lines[0];
  if (!first) return "";
  const olds = lines.filter((l) => l.text[0] !== "+").length;
  const news = lines.filter((l) => l.text[0] !== "-").length;
  return [`@@ -${first.old},${olds} +${first.new},${news} @@`, ...lines.map((l) => l.text)].join("\n");
}
