/** The dashboard's one stylesheet, served from /dashboard/style.css so the CSP can forbid inline styles. */
export const STYLE = `
:root { color-scheme: light; --fg: #1d2330; --muted: #667085; --line: #e3e6ec; --bg: #f6f7f9; --accent: #3b6ea8; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: #1d2330; color: #fff; }
header a { color: #fff; text-decoration: none; }
header nav { display: flex; gap: 16px; flex: 1; }
.brand { font-weight: 700; letter-spacing: .02em; }
.signout { display: flex; gap: 8px; align-items: center; margin-left: auto; }
.signout span { color: #c8cfdb; }
main { padding: 16px 24px 48px; max-width: 1600px; }
h1 { font-size: 20px; margin: 4px 0 12px; }
h2 { font-size: 15px; margin: 22px 0 8px; }
a { color: var(--accent); }
small, .quiet, .hint, .meta { color: var(--muted); }
code { font-size: 12px; }
button { font: inherit; padding: 4px 12px; border: 1px solid #b8c0cc; border-radius: 4px; background: #fff; cursor: pointer; }
button:hover { background: #eef2f7; }
.flash { margin: 16px 24px 0; max-width: 1552px; padding: 8px 12px; background: #eef6ee; border: 1px solid #b7d8b7; border-radius: 4px; }
.error { padding: 8px 12px; background: #fbeeee; border: 1px solid #e4b4b4; border-radius: 4px; }
.login { display: grid; gap: 10px; max-width: 360px; }
.login label { display: grid; gap: 4px; }
.login input { font: inherit; padding: 6px 8px; }
.state { display: inline-block; padding: 0 6px; border-radius: 3px; font-size: 12px; background: #e3e6ec; white-space: nowrap; }
.state-queued, .state-blocked, .state-new { background: #e8ecf3; }
.state-running, .state-revising { background: #fdf0c6; }
.state-awaiting_ci, .state-awaiting_review, .state-merging { background: #dde9f7; }
.state-awaiting_approval, .state-escalated { background: #fbdcc9; }
.state-merged, .state-done { background: #d6efd8; }
.state-abandoned { background: #eadede; }
.priority { padding: 1px 6px; border-radius: 3px; font-weight: 600; }
.priority-P0, .priority-P1 { background: #fbdcc9; }
.priority-P2 { background: #fdf0c6; }
.priority-P3, .priority-P4 { background: #e8ecf3; }
.count { color: var(--muted); font-weight: 400; }
.chips { display: flex; flex-wrap: wrap; gap: 8px; }
.chip { text-decoration: none; color: var(--fg); }
.project { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 4px 16px 8px; margin-bottom: 16px; }
.board { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr)); gap: 12px; align-items: start; }
.column { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 0 10px 10px; }
.column.empty { opacity: .6; }
.column h2 a { text-decoration: none; }
.column ol, .list { list-style: none; margin: 0; padding: 0; display: grid; gap: 8px; }
.card { border: 1px solid var(--line); border-radius: 4px; padding: 6px 8px; background: #fff; }
.card a { font-weight: 600; text-decoration: none; }
.card .meta { display: flex; flex-wrap: wrap; gap: 8px; font-size: 12px; }
.card .reason { margin: 4px 0 0; font-size: 12px; }
.more { display: inline-block; margin-top: 8px; }
.approval { display: grid; grid-template-columns: 1fr auto; gap: 12px; align-items: center; }
.actions { display: flex; gap: 8px; margin: 10px 0; }
form.inline { display: inline; margin-left: 8px; }
.action-approve { border-color: #5aa469; }
.action-reject, .action-abandon, .action-revoke { border-color: #c66; }
.vault-item { display: grid; grid-template-columns: 1fr auto; gap: 12px; align-items: start; background: #fff; border: 1px solid var(--line); border-radius: 4px; padding: 8px 10px; }
.vault-state-pending, .vault-state-approved { background: #fbdcc9; }
.vault-state-fired { background: #d6efd8; }
.vault-state-rejected, .vault-state-expired { background: #eadede; }
.consequence { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 6px 0; }
.consequence dt { color: var(--muted); }
.consequence dd { margin: 0; }
.command { display: inline-block; padding: 2px 6px; background: #1d2330; color: #f6f7f9; border-radius: 3px; white-space: pre-wrap; }
.audit { margin: 6px 0 0; padding-left: 18px; font-size: 12px; color: var(--muted); }
.presence { display: inline-block; padding: 0 6px; border-radius: 3px; font-size: 12px; }
.presence-busy { background: #fdf0c6; }
.presence-idle { background: #d6efd8; }
.presence-held { background: #fde2c6; color: #7a3b00; font-weight: 600; }
.presence-offline { background: #eadede; color: #8a1c1c; font-weight: 600; }
.unsafe { display: inline-block; padding: 0 6px; border-radius: 3px; color: #fff; background: #b42318; }
table { border-collapse: collapse; background: #fff; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; background: #fafbfc; }
.numbers td, .numbers th { text-align: right; }
.numbers td:first-child, .numbers th:first-child { text-align: left; }
.timeline tr.rejected td { color: var(--muted); }
.ci-red { color: #b42318; font-weight: 600; }
.ci-green { color: #2f7d3b; }
.checks { margin: 4px 0 0; padding-left: 18px; }
.activity { list-style: none; margin: 0; padding: 0; max-height: 24em; overflow-y: auto; font-size: 13px; }
.activity li { padding: 2px 0; }
.activity .kind { display: inline-block; min-width: 4em; color: var(--muted); }
.activity-error code { color: #b42318; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
.job { display: block; }
.chart { margin: 8px 0; max-width: 720px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 0 16px; }
.window { display: flex; flex-wrap: wrap; gap: 10px; align-items: center; margin: 0 0 12px; }
.window input { font: inherit; }
.chart > svg { width: 100%; height: auto; background: #fff; border: 1px solid var(--line); border-radius: 4px; }
.chart text { font-size: 11px; fill: #667085; }
.chart text.note { fill: #1d2330; }
.chart figcaption { color: var(--muted); font-size: 12px; display: flex; gap: 12px; flex-wrap: wrap; align-items: center; }
.legend { display: inline-flex; gap: 4px; align-items: center; }
.legend svg { flex: none; }
.alerts .text { white-space: pre-wrap; margin: 2px 0; }
.alerts .key { display: block; }
.sources { list-style: none; margin: 0; padding: 0; }
.channels .error-text { color: #b42318; }
`;
