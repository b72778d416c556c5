#!/usr/bin/env bash
# The README's quick start on a fresh clone, exactly as written: `npm ci && npm start` serves the
# demo (checked over HTTP), and the CLI gate works from the clone's root. Run by .ci/run.
# (test/docs/readme.test.ts checks that the README opens with these two commands.)
# `--here`: check this checkout instead of a new clone of it (for .ci/run, whose checkout is one).
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
cleanup() {
  # npm start runs node in a child: stop the whole process group.
  [ -n "${server:-}" ] && kill -TERM -- "-$server" 2>/dev/null || true
  rm -rf "$work"
  [ -n "${here_cleanup:-}" ] && rm -rf "$src"/airlock.db*
  true
}
trap cleanup EXIT
trap 'echo "fresh-clone check failed at line $LINENO: $BASH_COMMAND" >&2' ERR

if [ "${1:-}" = "--here" ]; then
  # .ci/run's own checkout is a clean clone on which `npm ci` has just run, as the README says:
  # cloning it again and installing a second time (better-sqlite3 is compiled from source, about a
  # minute of CPU) would check nothing more. Only a committed tree is checked this way.
  cd "$src"
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "fresh-clone check --here: the checkout has uncommitted changes; run it without --here" >&2
    exit 1
  fi
  # The demo's database is the default ./airlock.db: it must be new, as in a fresh clone, and goes
  # again afterwards with what the demo wrote beside it.
  if compgen -G "airlock.db*" >/dev/null; then
    echo "fresh-clone check --here: ./airlock.db exists; a fresh clone has none" >&2
    exit 1
  fi
  here_cleanup=1
else
  git clone -q "$src" "$work/airlock"
  cd "$work/airlock"
  # npm ci builds dist/ (the `prepare` script); the bin must be executable for `npx airlock` after it.
  npm ci --no-audit --no-fund >"$work/ci.log" 2>&1 || { tail -20 "$work/ci.log"; exit 1; }
fi
[ "$(npx airlock --version)" = "$(node -p 'require("./package.json").version')" ]

# npm start with the demo, on a free port (so a running Airlock is not disturbed), in its own
# process group so that stopping it stops node too.
setsid npm start -- --port 0 >"$work/start.log" 2>&1 &
server=$!
for _ in $(seq 1 150); do
  grep -q "sign in with the reviewer token" "$work/start.log" 2>/dev/null && break
  sleep 0.2
done
url=$(grep -o "serving at http://127.0.0.1:[0-9]*" "$work/start.log" | head -1 | sed 's/serving at //')
[ -n "$url" ] || { cat "$work/start.log"; exit 1; }
grep -q "Admin token" "$work/start.log" || { echo "no admin token printed"; exit 1; }
grep -q "sign in with the reviewer token" "$work/start.log" || { echo "the demo did not start"; cat "$work/start.log"; exit 1; }
curl -fsS "$url/healthz" >/dev/null
curl -fsS "$url/login" | grep -q "Sign in to the Airlock inbox"
kill -TERM -- "-$server"; wait "$server" || true; server=""

# The CLI gate of docs/guide/shell.md (linked from the README), on its own database.
export AIRLOCK_DB="$work/gate.db"
npx airlock request --title "Deploy v2 to prod" --item "migrate db" --item "restart api" --timeout 60 --wait >"$work/wait.out" 2>/dev/null &
waiter=$!
for _ in $(seq 1 100); do
  id=$( (npx airlock list --status pending --json 2>/dev/null || true) | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).items[0]?.id??"")}catch{console.log("")}})')
  [ -n "$id" ] && break
  sleep 0.2
done
npx airlock decide "$id" approve --select 2 --comment "db later" --as alice >/dev/null
wait "$waiter"
grep -q '"status": "approved"' "$work/wait.out"
grep -q '"restart api"' "$work/wait.out"
npx airlock audit verify >/dev/null
# The package imports itself by its npm name from the clone's root, as the docs' imports do.
node -e 'import("airlock-hitl").then((m) => { if (typeof m.createAirlock !== "function") process.exit(1); })'
echo "fresh clone: npm ci && npm start and the CLI quick start work"
