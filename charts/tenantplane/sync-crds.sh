#!/usr/bin/env bash
# Copies the CustomResourceDefinitions from libs/api/crds (their single source)
# into the chart's crds/ directory. The chart test fails when the copies drift,
# so run this after every CRD change.
set -euo pipefail

chart="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_dir="$chart/../../libs/api/crds"

rm -f "$chart"/crds/*.yaml
mkdir -p "$chart/crds"
cp "$source_dir"/*.yaml "$chart/crds/"
echo "copied $(ls "$source_dir"/*.yaml | wc -l) CRDs from libs/api/crds into charts/tenantplane/crds"
