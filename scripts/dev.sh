#!/usr/bin/env bash
# Serves the Worker on 127.0.0.1:8787 with local D1 migrations applied first; wrangler stays offline.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f .dev.vars ] || cp .dev.vars.example .dev.vars
wrangler d1 migrations apply DB --local
exec wrangler dev --ip 127.0.0.1 --port "${PORT:-8787}" "$@"
