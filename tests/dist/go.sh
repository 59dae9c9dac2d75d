#!/usr/bin/env bash
# dist-test host: a Go program in its own module, using bindings/go (a replace directive to this
# repository) and the installed library through `#cgo pkg-config`: shared by default, static with
# the mcp_static build tag.
#   tests/dist/go.sh PREFIX FIXTURE WORKDIR
set -euo pipefail
prefix=$1 fixture=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

command -v go >/dev/null || { echo "SKIP: go is not installed"; exit 77; }
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config is not installed"; exit 77; }
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig CGO_ENABLED=1 GOWORK=off GOFLAGS=-mod=mod GOPROXY=off
# A build cache of its own: Go's cache key does not cover pkg-config's answer, so a package
# compiled against another prefix (an earlier run, the in-tree library) would be reused as is.
export GOCACHE=$work/gocache
mkdir -p "$work/hello"
cp "$here/src/go/main.go" "$work/hello/"
cd "$work/hello"
cat >go.mod <<MOD
module example.com/mcp-dist-hello

go 1.22

require github.com/mcp-client/mcp_client/bindings/go v0.0.0

replace github.com/mcp-client/mcp_client/bindings/go => $repo/bindings/go
MOD

soname=$(readelf -d "$prefix/lib/libmcp_client.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
echo "-- go build (pkg-config mcp_client)"
go build -o hello-shared .
readelf -d hello-shared | grep -q "NEEDED.*\[$soname\]" || { echo "hello-shared does not need $soname" >&2; exit 1; }
LD_LIBRARY_PATH=$prefix/lib timeout 60 ./hello-shared "$fixture"

echo "-- go build -tags mcp_static (pkg-config mcp_client-static)"
go build -tags mcp_static -o hello-static .
if readelf -d hello-static | grep -q 'NEEDED.*libmcp_client'; then
  echo "hello-static (-tags mcp_static) still needs libmcp_client.so" >&2
  exit 1
fi
timeout 60 ./hello-static "$fixture"
echo "size: Go hello, -tags mcp_static: $(awk -v b="$(stat -c %s hello-static)" 'BEGIN { printf "%.2f", b / 1e6 }') MB"
