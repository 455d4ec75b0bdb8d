#!/usr/bin/env bash
# `npm run test:cluster`: the scale-out tests on the cluster profile (test/cluster/*.cluster.ts:
# the real Temporal server on PostgreSQL, two API, worker and media nodes as processes). Not
# part of `npm test` (its glob is test/**/*.test.ts): they take minutes and need the cluster
# tools, which the installer builds only for this profile (docs/decisions/0130-...).
# `npm run test:cluster -- test/cluster/media-node-lost.cluster.ts` runs one file.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
SKIP_CHROMIUM=1 bash scripts/setup.sh ferretdb cluster
files=()
for arg in "$@"; do [[ "$arg" == *.ts ]] && files+=("$arg"); done
[[ ${#files[@]} -gt 0 ]] || files=('test/cluster/**/*.cluster.ts')
# One file at a time (each starts its own cluster); no root hook: the files start their servers.
exec npx mocha --no-config --exit --require tsx/cjs --extension ts --timeout 900000 --reporter spec "${files[@]}"
