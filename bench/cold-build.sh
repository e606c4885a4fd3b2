#!/usr/bin/env bash
# Cold build of `cargo xtask validate`'s binary (dev profile, what a fresh clone compiles before
# its first `validate`), for two revisions side by side in the same conditions: each revision is
# cloned fresh with its own empty target dir and built at the same time as the other (niced),
# so the load of a shared machine hits both alike. Reports wall and CPU time (user + sys, less
# sensitive to load than wall) and keeps `cargo build --timings` reports for the per-crate view.
#
#   bench/cold-build.sh BASE_REV NEW_REV [OUT_DIR]
#     BASE_REV, NEW_REV  revisions of this repository (e.g. main and HEAD)
#     OUT_DIR            where the clones, targets and reports go (default /tmp/cold-build)
# The registry cache (~/.cargo/registry) is shared: sources are not downloaded again; that is
# also what a contributor's second clone sees. The crates must already be fetched (cargo fetch).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
base="${1:?BASE_REV}"
new="${2:?NEW_REV}"
out="${3:-/tmp/cold-build}"
rm -rf "$out"
mkdir -p "$out"
printf 'machine: %s cores; load average before: %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
build() {
  local name="$1" rev="$2"
  git clone -q "$here" "$out/$name"
  git -C "$out/$name" checkout -q "$rev"
  (cd "$out/$name" && CARGO_TARGET_DIR="$out/$name-target" /usr/bin/time -f '%e %U %S %M' \
    -o "$out/$name.time" nice -n 10 cargo build --quiet --timings -p xtask \
    >"$out/$name.log" 2>&1)
  # The timings report lands in the target dir's cargo-timings/.
  cp "$out/$name-target"/cargo-timings/cargo-timing.html "$out/$name-timing.html" 2>/dev/null || true
}
build base "$base" &
build new "$new" &
wait
printf 'load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
for name in base new; do
  read -r wall user sys rss <"$out/$name.time"
  printf '%-4s %-12s wall %7.1f s  cpu %7.1f s  (peak rustc RSS %s MiB)\n' "$name" \
    "$(git -C "$out/$name" rev-parse --short HEAD)" "$wall" "$(echo "$user + $sys" | bc -l)" \
    "$((rss / 1024))"
done
read -r bw bu bs _ <"$out/base.time"
read -r nw nu ns _ <"$out/new.time"
awk -v bw="$bw" -v nw="$nw" -v bc="$(echo "$bu + $bs" | bc -l)" -v nc="$(echo "$nu + $ns" | bc -l)" \
  'BEGIN {printf "new / base: wall %.2f, cpu %.2f; on an idle 2-core machine the wall time is about the cpu time / 2 plus the serial tail (see the timings reports)\n", nw / bw, nc / bc}'
echo "reports: $out/base-timing.html $out/new-timing.html"
