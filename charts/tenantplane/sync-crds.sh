#!/usr/bin/env bash
# Copies the CustomResourceDefinitions from libs/api/crds (their single source)
# into the chart's files/crds/ directory, which templates/crds.yaml renders
# (so `helm upgrade` upgrades them). The chart test fails when the copies drift,
# so run this after every CRD change.
set -euo pipefail

chart="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_dir="$chart/../../libs/api/crds"

mkdir -p "$chart/files/crds"
rm -f "$chart"/files/crds/*.yaml
cp "$source_dir"/*.yaml "$chart/files/crds/"
echo "copied $(ls "$source_dir"/*.yaml | wc -l) CRDs from libs/api/crds into charts/tenantplane/files/crds"
