#!/usr/bin/env bash
# `npm test`: install what is missing, then mocha over the TypeScript sources. The root hook
# (test/support/hooks.ts) starts FerretDB and the Temporal dev server on free ports.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
exec npx mocha "$@"
