#!/usr/bin/env bash
# `npm test`: install what is missing, then mocha over the TypeScript sources. The root hook
# (test/support/hooks.ts) starts FerretDB and the Temporal dev server on free ports.
# `npm test -- test/api/calls/place.test.ts` runs only the files given (mocha adds a config
# file's `spec` to the command line's, so the whole suite is named here, not in .mocharc.json).
# The whole suite runs as TEST_JOBS mocha processes at once (default: one per core, at most 4),
# each with its own servers over its share of the files (docs/decisions/0242).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
# --exit: once every test and the root hook's teardown have run, the run ends, even when a failed
# test left a worker or a connection open (a CI run once waited on one until its time limit).
for arg in "$@"; do
  if [[ "$arg" != -* && ( "$arg" == *.ts || -d "$arg" ) ]]; then exec npx mocha --exit "$@"; fi
done
jobs="${TEST_JOBS:-$(nproc)}"
(( jobs > 4 )) && jobs=4
if (( jobs <= 1 )); then exec npx mocha --exit "$@" 'test/**/*.test.ts'; fi
exec npx tsx scripts/test-shards.ts --jobs "$jobs" -- "$@"
