#!/usr/bin/env bash
# For working on the client: a fresh `verdict serve` (debug build) on a free port in a
# temporary directory, serving the client from web/app/dist (so `npm run build` is enough
# to see a change), with a site administrator. Prints the variables the browser tests read:
#   eval "$(web/app/e2e/dev-server.sh)" && (cd web/app && npx playwright test)
# Pass --demo to seed the demo events too. DIST=... serves another build folder.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${VERDICT_BIN:-$here/../../target/debug/verdict}"
dir="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
cd "$dir"
password="$("$bin" admin create --email admin@example.org | tail -n1)"
nohup "$bin" serve --addr "127.0.0.1:$port" --web-dir "${DIST:-$here/dist}" "$@" >"$dir/serve.log" 2>&1 &
for _ in $(seq 1 50); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
echo "export VERDICT_URL=http://127.0.0.1:$port VERDICT_ADMIN_EMAIL=admin@example.org VERDICT_ADMIN_PASSWORD=$password VERDICT_SERVER_PID=$! VERDICT_SERVER_DIR=$dir"
