#!/usr/bin/env bash
# Bench: resolving + verifying 100 image references against a local docker-registry with
# infx-image (one process, keep-alive, 8 in parallel; also sequential) versus the reference
# tool, `skopeo inspect --raw`, run sequentially once per reference. Prints medians and ratios.
#
# Usage: bench/image.sh [SKOPEO] [REFS] [RUNS]
#   SKOPEO  the reference tool to compare against (default: `skopeo` from PATH; Debian: apt-get install skopeo)
#   REFS    number of references (default 100)
#   RUNS    runs of the infx side (default 7; skopeo runs 3 times)
# Needs: docker-registry (apt-get install docker-registry) and skopeo. Release build.
set -euo pipefail
cd "$(dirname "$0")/.."
SKOPEO="${1:-skopeo}"
REFS="${2:-100}"
RUNS="${3:-7}"
command -v docker-registry >/dev/null || { echo "docker-registry not installed (apt-get install -y docker-registry)" >&2; exit 1; }
command -v "$SKOPEO" >/dev/null || { echo "$SKOPEO not found (apt-get install -y skopeo)" >&2; exit 1; }
echo "reference tool: $("$SKOPEO" --version)"
echo "registry: $(docker-registry --version)"
cargo run --quiet --release -p infx-image --example bench_image -- \
  --refs "$REFS" --runs "$RUNS" --skopeo-runs 3 --skopeo "$SKOPEO"
