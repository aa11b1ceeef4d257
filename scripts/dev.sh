#!/usr/bin/env bash
# Serves the Worker on 127.0.0.1:8787 with local D1 migrations applied first; wrangler stays offline.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f .dev.vars ] || cp .dev.vars.example .dev.vars
# One line for the migrations (wrangler prints a table per migration); all of its output when they fail.
if ! migrated=$(wrangler d1 migrations apply DB --local 2>&1); then
  printf '%s\n' "$migrated" >&2
  exit 1
fi
applied=$(printf '%s\n' "$migrated" | sed -n 's/.*About to apply \([0-9]*\) migration.*/\1/p')
echo "local D1 (.wrangler/state): ${applied:-no new} migration(s) applied"
exec wrangler dev --ip 127.0.0.1 --port "${PORT:-8787}" "$@"
