#!/usr/bin/env bash
# `npm run start:cluster`: install what is missing (the cluster tools included: the Temporal
# server and its Web UI server, built once), build, and launch the cluster profile
# (scripts/launch-cluster.ts). PostgreSQL comes from the system (Debian: apt-get install postgresql).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

tools=(cluster)
[[ -n "${MONGODB_URI:-}" ]] || tools+=(ferretdb)
bash scripts/setup.sh --build "${tools[@]}"
exec node dist/scripts/launch-cluster.js
