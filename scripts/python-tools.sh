#!/usr/bin/env bash
# The Python tools of the tests, in the git-ignored virtualenv .venv/: the OpenAPI fuzzer
# (schemathesis, `npm run test:fuzz`) and PyYAML, the YAML 1.1 parser the OpenAPI document is
# also loaded with (test/unit/openapi-yaml.test.ts). Pinned in test/fuzz/requirements.txt;
# reinstalled only when that file changes. Needs python3 with its venv module.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

requirements=test/fuzz/requirements.txt
stamp=.venv/.requirements
if [[ -x .venv/bin/python && -f "$stamp" ]] && cmp -s "$requirements" "$stamp"; then
  echo "[setup] python tools (.venv): present"
  exit 0
fi
command -v python3 >/dev/null 2>&1 || { echo "[setup] error: python3 is missing; install Python 3.9 or later (with its venv module) for the fuzzer and the YAML test" >&2; exit 1; }
echo "[setup] python tools: installing $(grep -v '^#' "$requirements" | tr '\n' ' ')into .venv/"
[[ -x .venv/bin/python ]] || python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r "$requirements"
cp "$requirements" "$stamp"
