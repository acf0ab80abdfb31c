#!/usr/bin/env bash
# Instructions the server executes per signed-in gallery page, under callgrind: noise-free
# on a shared machine, so a before/after of one change is one number. See bench/README.md
# ("Where the time goes").
#
#   bench/profile/cgrun.sh DIR BINARY OUT [N]
#
# DIR: a directory kept by `verdict-bench --keep` (its verdict.db and signing key);
# BINARY: a release `verdict`; OUT: callgrind's output file; N: pages measured (200).
set -euo pipefail
dir=$1 bin=$(realpath "$2") out=$(realpath -m "$3") n=${4:-200}
port=${PORT:-8799}
cd "$dir"
db="sqlite://verdict.db?mode=rwc"
token=$("$bin" token mint --database-url "$db" --email organizer@bench-gallery.bench.local \
  --name profile 2>/dev/null | tail -n1)
valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" serve --database-url "$db" \
  --addr "127.0.0.1:$port" --rate-limit-per-second 1000000 --rate-limit-burst 1000000 \
  >"$out-serve.log" 2>&1 &
vg=$!
for _ in $(seq 1 120); do curl -fs -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 1; done
query='{"query":"query { event(slug: \"bench-gallery\") { projects(first: 50) { edges { node { title tagline track { name } team { name } } } } } }"}'
# One curl for all pages of a round, so they share one keep-alive connection, as a browser's.
page() {
  local config
  config=$(mktemp)
  for i in $(seq 1 "$1"); do
    [ "$i" -gt 1 ] && echo next >>"$config"
    printf 'url = "http://127.0.0.1:%s/graphql"\nheader = "Authorization: Bearer %s"\n' "$port" "$token" >>"$config"
    printf 'header = "Content-Type: application/json"\ndata = %s\noutput = /dev/null\nfail\nsilent\n' \
      "$(printf '%s' "$query" | sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$/"/')" >>"$config"
  done
  curl -K "$config"
  rm -f "$config"
}
page 30                      # warm: statement caches, loaders, the allocator
callgrind_control -z "$vg" >/dev/null
page "$n"
callgrind_control -d "$vg" >/dev/null
sleep 2
kill -INT "$vg"; wait "$vg" || true
ir=$(grep -h '^summary:' "$out".* | awk '{ if ($2 > m) m = $2 } END { print m }')
echo "instructions per signed-in gallery page: $((ir / n)) (callgrind_annotate $(ls "$out".* | tail -n1))"
