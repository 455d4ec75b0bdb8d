#!/usr/bin/env bash
# `npm test`: install what is missing, then mocha over the TypeScript sources. The root hook
# (test/support/hooks.ts) starts FerretDB and the Temporal dev server on free ports.
# `npm test -- test/api/calls/place.test.ts` runs only the files given (mocha adds a config
# file's `spec` to the command line's, so the whole suite is named here, not in .mocharc.json).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
for arg in "$@"; do
  if [[ "$arg" != -* && ( "$arg" == *.ts || -d "$arg" ) ]]; then exec npx mocha "$@"; fi
done
exec npx mocha "$@" 'test/**/*.test.ts'
