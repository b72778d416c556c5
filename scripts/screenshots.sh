#!/usr/bin/env bash
# Refreshes the inbox screenshots the docs show (docs/inbox-*.png, the README's queue) from a real
# run: the browser tests that take them, in Debian's chromium, with AIRLOCK_SCREENSHOTS=1 (they write
# to docs/ instead of a temporary folder). Only the files whose pictures the docs link are run; each
# test still asserts what it shows, so a broken page fails here instead of being photographed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [ ! -x /usr/bin/chromium ]; then
  echo "screenshots: /usr/bin/chromium is missing (apt-get install -y chromium)" >&2
  exit 1
fi
AIRLOCK_SCREENSHOTS=1 AIRLOCK_REQUIRE_BROWSER=1 npx vitest run \
  test/inbox/inbox.browser.int.test.ts \
  test/inbox/review-view.browser.int.test.ts \
  test/embed/card-review.browser.int.test.ts \
  --maxWorkers 2
git status --short -- 'docs/*.png'
