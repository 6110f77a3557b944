#!/usr/bin/env bash
# Builds the test stack's binaries once and caches them by version outside the
# git tree: the Kubernetes control plane (this module), kwok, helm, nats-server and
# CoreDNS (the tenant DNS server, run for real by the DNS tests).
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

# The cluster binary's stamp covers everything that changes its output.
stamp="$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)"
cluster="$tools/cluster-$K8S_VERSION-$stamp"
if [[ ! -x "$cluster" ]]; then
  log "building Kubernetes $K8S_VERSION control plane (cold build takes a while on 2 cores)"
  start=$SECONDS
  ldflags="-s -w"
  ldflags+=" -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
  ldflags+=" -X k8s.io/component-base/version.gitMajor=1"
  ldflags+=" -X k8s.io/component-base/version.gitMinor=34"
  ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
  ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$cluster.tmp" .)
  mv "$cluster.tmp" "$cluster"
  log "cluster built in $((SECONDS - start))s"
fi
ln -sfn "$(basename "$cluster")" "$tools/cluster"

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

install_tool kwok sigs.k8s.io/kwok/cmd/kwok "$KWOK_VERSION"
install_tool helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
install_tool nats-server github.com/nats-io/nats-server/v2 "$NATS_SERVER_VERSION"
install_tool coredns github.com/coredns/coredns "$COREDNS_VERSION"

echo "$tools"
