#!/usr/bin/env bash
# Installs the local infrastructure into .tools/ (git-ignored), pinned and idempotent:
#   - Temporal CLI dev server, built from its official Go module
#   - FerretDB (MongoDB wire protocol, SQLite backend), built from its downloaded Go module
#   - Temporal's Java time-skipping test server (Maven Central) plus a launcher script
#   - only when asked (`s3`: the recordings object-storage tests): SeaweedFS's `weed`, an
#     S3-compatible server (Apache-2.0), built from its official Go module
#   - only when asked (`cluster`: npm run start:cluster / test:cluster): the Temporal server,
#     its SQL schema tool (which embeds the PostgreSQL schemas), and the Temporal Web UI server
# Each step prints one progress line and skips itself when its pinned version is present.
# Why the FerretDB build is not a plain `go install`: see docs/infrastructure.md.
set -euo pipefail

TEMPORAL_CLI_VERSION="v1.5.1"
FERRETDB_VERSION="v1.24.2"
TEMPORAL_TEST_SERVER_VERSION="1.38.0" # also pinned in scripts/tools/temporal-test-server.pom.xml
TEMPORAL_SERVER_VERSION="v1.29.1"     # the server the CLI above embeds; also in docker-compose.yml
TEMPORAL_UI_SERVER_VERSION="v2.42.1"  # also in docker-compose.yml (temporalio/ui)
PROMTOOL_VERSION="v0.316.0"           # Prometheus 3.16's Go module version (its v3 tags are v0.3xx.y), built when Debian's is not at hand
PROMTOOL_DEBIAN_VERSION="2.42.0+ds-5+deb12u1" # Debian 12's prometheus package, whose promtool is unpacked when apt is there
# SeaweedFS (Apache-2.0), an S3-compatible object store for the recordings tests; the Go proxy's
# pseudo-version of upstream's commit 7506e5f91cd6 (the module carries no semver tags for weed/).
SEAWEEDFS_VERSION="v0.0.0-20261109003541-7506e5f91cd6"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${TOOLS_DIR:-$root/.tools}"
bin="$tools/bin"
stamps="$tools/stamps"
mkdir -p "$bin" "$stamps"

step() { printf '[tools] %s\n' "$*"; }
fail() { printf '[tools] error: %s\n' "$*" >&2; exit 1; }

require() {
  local cmd="$1" why="$2"
  command -v "$cmd" >/dev/null 2>&1 || fail "'$cmd' is missing; it is needed to $why. Install it (Debian: $3) and run again."
}

installed() { [[ -f "$stamps/$1" && -x "$2" ]]; }

install_temporal_cli() {
  local stamp="temporal-cli-$TEMPORAL_CLI_VERSION"
  if installed "$stamp" "$bin/temporal"; then step "temporal CLI $TEMPORAL_CLI_VERSION: present"; return; fi
  require go "build the Temporal CLI dev server" "apt-get install golang, or go.dev/dl"
  step "temporal CLI $TEMPORAL_CLI_VERSION: building from github.com/temporalio/cli (a few minutes on a cold Go cache)"
  GOBIN="$bin" GOFLAGS=-mod=mod go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
  touch "$stamps/$stamp"
  step "temporal CLI $TEMPORAL_CLI_VERSION: installed at $bin/temporal"
}

install_ferretdb() {
  # The stamp names the patch too, so that a machine with an unpatched build rebuilds.
  local stamp="ferretdb-$FERRETDB_VERSION-id-index-update-lock-id-pushdown"
  if installed "$stamp" "$bin/ferretdb"; then step "FerretDB $FERRETDB_VERSION: present"; return; fi
  require go "build FerretDB" "apt-get install golang, or go.dev/dl"
  step "FerretDB $FERRETDB_VERSION: downloading module github.com/FerretDB/FerretDB"
  local module_dir
  module_dir="$(cd "$tools" && go mod download -json "github.com/FerretDB/FerretDB@$FERRETDB_VERSION" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$module_dir" ]] || fail "go mod download gave no module directory for FerretDB $FERRETDB_VERSION"
  local src="$tools/src/ferretdb-$FERRETDB_VERSION"
  rm -rf "$src" && mkdir -p "$tools/src"
  cp -R "$module_dir" "$src" && chmod -R u+w "$src"
  # The module zip leaves build/version/version.txt empty (upstream fills it with `git describe`);
  # FerretDB refuses to start without it.
  printf '%s\n' "$FERRETDB_VERSION" >"$src/build/version/version.txt"
  patch_ferretdb_id_lookups "$src"
  patch_ferretdb_update_lock "$src"
  patch_ferretdb_id_pushdown "$src"
  step "FerretDB $FERRETDB_VERSION: building (SQLite backend included)"
  (cd "$src" && GOFLAGS=-mod=mod go build -trimpath -o "$bin/ferretdb" ./cmd/ferretdb)
  rm -rf "$src"
  touch "$stamps/$stamp"
  step "FerretDB $FERRETDB_VERSION: installed at $bin/ferretdb"
}

# FerretDB 1.24's SQLite backend looks documents up by `_id` with the expression
# `_ferretdb_sjson->'$._id'`, but creates the `_id_` index on `_ferretdb_sjson->"_id"`. SQLite
# uses an expression index only for the same expression, so every read, update and delete by
# `_id` scanned the whole table (26 ms per read, 76 ms per update at 10,000 documents). The
# label form `->'_id'` means the same JSON path and matches the index (both forms verified with
# EXPLAIN QUERY PLAN; see docs/infrastructure.md). The build fails if the line ever changes upstream.
patch_ferretdb_id_lookups() {
  local file="$1/internal/backends/sqlite/metadata/metadata.go"
  grep -q "IDColumn = DefaultColumn + \"->'\$._id'\"" "$file" || fail "FerretDB's IDColumn changed upstream; review patch_ferretdb_id_lookups"
  sed -i "s/IDColumn = DefaultColumn + \"->'\$._id'\"/IDColumn = DefaultColumn + \"->'_id'\"/" "$file"
  grep -q "IDColumn = DefaultColumn + \"->'_id'\"" "$file" || fail "patching FerretDB's IDColumn failed"
}

# FerretDB 1.24 runs `update` and `findAndModify` as a read, a change made in Go, and a write
# of the whole document, with nothing held in between: two concurrent updates of one document
# each write back what they read, so one's changes are lost (76 of 300 pairs of `$set` on two
# fields lost one in our check; see docs/infrastructure.md). MongoDB applies each update atomically
# to its document. The patch serializes these read-modify-write commands per collection.
patch_ferretdb_update_lock() {
  local handler="$1/internal/handler"
  cat >"$handler/collection_write_lock.go" <<'GO'
package handler

import "sync"

// collectionWriteLocks holds one mutex per "db.collection" (patched in by voice-agent-service):
// update and findAndModify read, change and write back whole documents, and must not interleave.
var collectionWriteLocks sync.Map

// lockCollectionWrites locks the collection's read-modify-write commands; call the result to unlock.
func lockCollectionWrites(db, collection string) func() {
	lock, _ := collectionWriteLocks.LoadOrStore(db+"."+collection, new(sync.Mutex))
	mutex := lock.(*sync.Mutex)
	mutex.Lock()
	return mutex.Unlock
}
GO
  patch_after "$handler/msg_update.go" \
    'func (h \*Handler) updateDocument(ctx context.Context, params \*common.UpdateParams) (int32, int32, \*types.Array, error) {' \
    '	defer lockCollectionWrites(params.DB, params.Collection)()'
  patch_after "$handler/msg_findandmodify.go" \
    'func (h \*Handler) findAndModifyDocument(ctx context.Context, params \*common.FindAndModifyParams) (\*findAndModifyResult, error) {' \
    '	defer lockCollectionWrites(params.DB, params.Collection)()'
}

# FerretDB 1.24's SQLite backend narrows a query to the `_id` index only when the filter is
# `{_id: value}` and nothing else; any other filter reads and decodes every document of the
# collection in Go. A guarded write such as `{_id, status: {$nin: [...]}}` (a claim) therefore
# scanned the whole calls collection, under patch 2's lock, in each answer to the provider.
# MongoDB uses the `_id` index for any filter with an `_id` equality. FerretDB filters every
# document it reads in Go again (common.FilterIterator, FilterDocument), so reading only the
# one document whose `_id` is named returns the same result; the patch drops the "nothing
# else" condition, in the query and in its explanation (filterPushdown).
patch_ferretdb_id_pushdown() {
  local file="$1/internal/backends/sqlite/collection.go"
  [[ "$(grep -cx $'\tif params.Filter.Len() == 1 {' "$file")" == 2 ]] || fail "FerretDB's SQLite _id pushdown changed upstream; review patch_ferretdb_id_pushdown"
  sed -i 's/^\tif params.Filter.Len() == 1 {$/\tif params.Filter.Len() > 0 \&\& params.Filter.Has("_id") {/' "$file"
  [[ "$(grep -cx $'\tif params.Filter.Len() > 0 && params.Filter.Has("_id") {' "$file")" == 2 ]] || fail "patching FerretDB's _id pushdown failed"
}

# Inserts a line after the one line matching the pattern (a grep -x basic regex); fails when
# the pattern does not match exactly once, so that an upstream change is reviewed, not missed.
patch_after() {
  local file="$1" pattern="$2" line="$3"
  [[ "$(grep -cx -- "$pattern" "$file")" == 1 ]] || fail "$(basename "$file") changed upstream; review the FerretDB patches"
  local number
  number="$(grep -nx -- "$pattern" "$file" | cut -d: -f1)"
  sed -i "${number}a\\
$line" "$file"
}

install_temporal_test_server() {
  local stamp="temporal-test-server-$TEMPORAL_TEST_SERVER_VERSION"
  local dir="$tools/temporal-test-server"
  if installed "$stamp" "$dir/temporal-test-server"; then step "Temporal test server $TEMPORAL_TEST_SERVER_VERSION: present"; return; fi
  require java "run Temporal's time-skipping test server" "apt-get install openjdk-17-jre-headless"
  require mvn "download Temporal's time-skipping test server from Maven Central" "apt-get install maven"
  step "Temporal test server $TEMPORAL_TEST_SERVER_VERSION: resolving io.temporal:temporal-test-server and its runtime dependencies"
  rm -rf "$dir" && mkdir -p "$dir/lib"
  mvn -B -q -f "$root/scripts/tools/temporal-test-server.pom.xml" \
    -Dtemporal.test-server.version="$TEMPORAL_TEST_SERVER_VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir/lib"
  # TestWorkflowEnvironment.createTimeSkipping runs `<path> <port> --enable-time-skipping`.
  cat >"$dir/temporal-test-server" <<'LAUNCHER'
#!/usr/bin/env bash
exec java -cp "$(dirname "$0")/lib/*" io.temporal.testserver.TestServer "$@"
LAUNCHER
  chmod +x "$dir/temporal-test-server"
  touch "$stamps/$stamp"
  step "Temporal test server $TEMPORAL_TEST_SERVER_VERSION: installed at $dir/temporal-test-server"
}

# Builds one `cmd/...` program of a Go module at a pinned version into $bin/<name>. `go install`
# names the binary after its folder (`server`, `sql`), so it builds into a scratch GOBIN first.
go_install_as() {
  local name="$1" package="$2" version="$3"
  local scratch="$tools/gobin-$name"
  rm -rf "$scratch" && mkdir -p "$scratch"
  GOBIN="$scratch" GOFLAGS=-mod=mod go install "$package@$version"
  mv "$scratch/$(basename "$package")" "$bin/$name"
  rm -rf "$scratch"
}

install_temporal_cluster() {
  local stamp="temporal-cluster-$TEMPORAL_SERVER_VERSION-ui-$TEMPORAL_UI_SERVER_VERSION"
  if installed "$stamp" "$bin/temporal-server" && [[ -x "$bin/temporal-sql-tool" && -x "$bin/temporal-ui-server" ]]; then
    step "Temporal server $TEMPORAL_SERVER_VERSION and UI server $TEMPORAL_UI_SERVER_VERSION: present"; return
  fi
  require go "build the Temporal server and its Web UI server" "apt-get install golang, or go.dev/dl"
  step "Temporal server $TEMPORAL_SERVER_VERSION: building go.temporal.io/server/cmd/server (several minutes on 2 cores)"
  go_install_as temporal-server go.temporal.io/server/cmd/server "$TEMPORAL_SERVER_VERSION"
  # The tool embeds the module's schema/ folder (`--schema-name postgresql/v12/temporal`).
  step "Temporal SQL tool $TEMPORAL_SERVER_VERSION: building go.temporal.io/server/cmd/tools/sql (with its PostgreSQL schemas)"
  go_install_as temporal-sql-tool go.temporal.io/server/cmd/tools/sql "$TEMPORAL_SERVER_VERSION"
  step "Temporal UI server $TEMPORAL_UI_SERVER_VERSION: building github.com/temporalio/ui-server/v2/cmd/server"
  go_install_as temporal-ui-server github.com/temporalio/ui-server/v2/cmd/server "$TEMPORAL_UI_SERVER_VERSION"
  touch "$stamps/$stamp"
  step "Temporal cluster tools: installed at $bin/temporal-server, temporal-sql-tool, temporal-ui-server"
}

# Prometheus's own checker: the tests run `promtool check metrics` on every process's /metrics
# and `promtool check rules` on ops/prometheus/alerts.yml, so that what operators load is what
# Prometheus accepts, not what our parser accepts. Debian's build of it is taken from the
# system's package archive when apt is there (a 19 MB download, seconds; unpacked into .tools/,
# nothing installed system-wide, no Prometheus service started); otherwise it is built from
# Prometheus's Go module (10+ minutes on 2 cores, too long for every clean CI machine).
install_promtool() {
  local deb_stamp="promtool-debian-$PROMTOOL_DEBIAN_VERSION" go_stamp="promtool-$PROMTOOL_VERSION"
  if installed "$deb_stamp" "$bin/promtool"; then step "promtool $PROMTOOL_DEBIAN_VERSION (Debian): present"; return; fi
  if installed "$go_stamp" "$bin/promtool"; then step "promtool $PROMTOOL_VERSION: present"; return; fi
  if command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1; then
    local scratch
    scratch="$(mktemp -d)"
    step "promtool $PROMTOOL_DEBIAN_VERSION (Debian): unpacking the prometheus package's promtool"
    if ! (cd "$scratch" && apt-get download -qq "prometheus=$PROMTOOL_DEBIAN_VERSION" >/dev/null 2>&1); then
      # A fresh machine may have no package lists yet; only root may fetch them.
      if [[ "$(id -u)" == 0 ]]; then apt-get update -qq >/dev/null 2>&1 || true; fi
      (cd "$scratch" && apt-get download -qq "prometheus=$PROMTOOL_DEBIAN_VERSION" >/dev/null 2>&1) || true
    fi
    if compgen -G "$scratch/prometheus_*.deb" >/dev/null && dpkg-deb -x "$scratch"/prometheus_*.deb "$scratch/unpacked" && [[ -x "$scratch/unpacked/usr/bin/promtool" ]]; then
      cp "$scratch/unpacked/usr/bin/promtool" "$bin/promtool"
      rm -rf "$scratch"
      touch "$stamps/$deb_stamp"
      step "promtool $PROMTOOL_DEBIAN_VERSION (Debian): installed at $bin/promtool"
      return
    fi
    rm -rf "$scratch"
    step "promtool: Debian's package $PROMTOOL_DEBIAN_VERSION is not available here; building it instead"
  fi
  require go "build Prometheus's promtool" "apt-get install golang, or go.dev/dl"
  step "promtool $PROMTOOL_VERSION: building github.com/prometheus/prometheus/cmd/promtool (10+ minutes on 2 cores)"
  go_install_as promtool github.com/prometheus/prometheus/cmd/promtool "$PROMTOOL_VERSION"
  touch "$stamps/$go_stamp"
  step "promtool $PROMTOOL_VERSION: installed at $bin/promtool"
}

install_seaweedfs() {
  local stamp="seaweedfs-$SEAWEEDFS_VERSION"
  if installed "$stamp" "$bin/weed"; then step "SeaweedFS $SEAWEEDFS_VERSION: present"; return; fi
  require go "build SeaweedFS, the S3-compatible server of the recordings tests" "apt-get install golang, or go.dev/dl"
  step "SeaweedFS $SEAWEEDFS_VERSION: building github.com/seaweedfs/seaweedfs/weed (10 minutes or more on 2 cores)"
  # Not `go install weed@version`: the module's go.mod carries a `replace` directive (another
  # module in place of a deleted one), which `go install` refuses. So: download the module and
  # build its weed/ package inside it, where the directive applies (read-only source is enough).
  local module_dir
  module_dir="$(cd "$tools" && go mod download -json "github.com/seaweedfs/seaweedfs@$SEAWEEDFS_VERSION" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$module_dir" ]] || fail "go mod download gave no module directory for SeaweedFS $SEAWEEDFS_VERSION"
  (cd "$module_dir" && GOFLAGS=-mod=readonly go build -trimpath -o "$bin/weed" ./weed)
  touch "$stamps/$stamp"
  step "SeaweedFS $SEAWEEDFS_VERSION: installed at $bin/weed"
}

# PostgreSQL is not built here: it comes from the system's packages (scripts/infra/postgres.ts).
check_postgres() {
  local dir
  for dir in "${PG_BIN:-}" /usr/lib/postgresql/*/bin; do
    if [[ -n "$dir" && -x "$dir/postgres" && -x "$dir/initdb" ]]; then step "PostgreSQL: present ($dir)"; return; fi
  done
  fail "PostgreSQL 12 or newer is missing; the cluster profile stores Temporal in it. Install it (Debian: apt-get install postgresql) or set PG_BIN, and run again."
}

# Usage: install-tools.sh [temporal] [ferretdb] [test-server] [promtool] [s3] [cluster]
#   (none: the first four; `s3` and `cluster` add optional tools, and only on request)
[[ $# -gt 0 ]] || set -- temporal ferretdb test-server promtool
for tool in "$@"; do
  case "$tool" in
    temporal) install_temporal_cli ;;
    ferretdb) install_ferretdb ;;
    test-server) install_temporal_test_server ;;
    promtool) install_promtool ;;
    s3) install_seaweedfs ;;
    cluster) check_postgres; install_temporal_cluster ;;
    *) fail "unknown tool '$tool'; usage: install-tools.sh [temporal] [ferretdb] [test-server] [promtool] [s3] [cluster]" ;;
  esac
done
