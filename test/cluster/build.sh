#!/usr/bin/env bash
# Builds the test stack's binaries once and caches them by version outside the
# git tree: the Kubernetes control plane (this module), CoreDNS (the tenant DNS server,
# run for real by the DNS tests; module coredns/), kwok, helm and nats-server.
# A warm run only checks stamps. Prints the tools directory on its last line.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="${TENANTPLANE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tenantplane/tools}"
mkdir -p "$tools"

K8S_VERSION="v1.34.4"
KWOK_VERSION="v0.7.0"
HELM_VERSION="v3.19.0"
NATS_SERVER_VERSION="v2.14.9"
COREDNS_VERSION="v1.15.0"

log() { printf '[build] %s\n' "$*" >&2; }

# One build at a time per tools directory: CI starts this script early, in the background,
# and the test harness runs it again; the second waits here and then finds everything built.
# The builds themselves run one after another: together they keep 2 cores busy for about half
# an hour of CPU time, and side by side they finished no sooner (each compiled the packages
# they share instead of finding them in the build cache).
exec 9>"$tools/.lock"
flock 9

# A binary built from a module in this directory; its stamp covers everything that changes it.
build_module() { # name dir version ldflags
  local name="$1" dir="$2" version="$3" ldflags="$4"
  local stamp target start
  stamp="$(cat "$dir/go.mod" "$dir/go.sum" "$dir/main.go" | sha256sum | cut -c1-16)"
  target="$tools/$name-$version-$stamp"
  if [[ ! -x "$target" ]]; then
    log "building $name $version"
    start=$SECONDS
    (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$target.tmp" .)
    mv "$target.tmp" "$target"
    log "$name built in $((SECONDS - start))s"
  fi
  ln -sfn "$(basename "$target")" "$tools/$name"
}

cluster_ldflags="-s -w"
cluster_ldflags+=" -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
cluster_ldflags+=" -X k8s.io/component-base/version.gitMajor=1"
cluster_ldflags+=" -X k8s.io/component-base/version.gitMinor=34"
cluster_ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
cluster_ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
build_module cluster "$here" "$K8S_VERSION" "$cluster_ldflags"

install_tool() { # name module version
  local name="$1" module="$2" version="$3"
  local target="$tools/$name-$version"
  if [[ ! -x "$target" ]]; then
    log "installing $name $version"
    local start=$SECONDS gobin
    gobin="$(mktemp -d)"
    CGO_ENABLED=0 GOBIN="$gobin" go install -trimpath -ldflags "-s -w" "$module@$version"
    mv "$gobin/$(basename "${module%/v[0-9]*}")" "$target" 2>/dev/null || mv "$gobin"/* "$target"
    rm -rf "$gobin"
    log "$name installed in $((SECONDS - start))s"
  fi
  ln -sfn "$(basename "$target")" "$tools/$name"
}

build_module coredns "$here/coredns" "$COREDNS_VERSION" "-s -w"
install_tool kwok sigs.k8s.io/kwok/cmd/kwok "$KWOK_VERSION"
install_tool helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
install_tool nats-server github.com/nats-io/nats-server/v2 "$NATS_SERVER_VERSION"

echo "$tools"
