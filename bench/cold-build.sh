#!/usr/bin/env bash
# Cold build of `cargo xtask validate`'s binary (dev profile, what a fresh clone compiles before
# its first `validate`). Each revision is cloned fresh with its own empty target dir and built
# the way its own `cargo xtask` alias builds (read from its .cargo/config.toml, `run` turned into
# `build --timings`), so a revision whose alias leaves features out is measured as it is used.
# Reports wall and CPU time (user + sys, less sensitive to load than wall) and keeps the
# `cargo build --timings` report of each build for the per-crate view.
#
#   bench/cold-build.sh BASE_REV NEW_REV [OUT_DIR]
#       both revisions side by side, built at the same time (niced), so the load of a shared
#       machine hits both alike: compare the CPU times.
#   bench/cold-build.sh --single REV [OUT_DIR]
#       one build alone (for the wall time on an idle machine), then the rebuild churn of the
#       registry hand-over (README, "What builds when"): `cargo xtask pin --help` (builds the
#       `xtask-registry` binary on first use), then `cargo xtask validate --help` again (should
#       rebuild nothing).
# OUT_DIR (default /tmp/cold-build) receives the clones, targets and reports; the clones and
# targets are deleted at the end (the disk is shared); the reports, timings and the built
# binaries (OUT_DIR/NAME-xtask) are kept.
# The registry cache (~/.cargo/registry) is shared: sources are not downloaded again; that is
# also what a contributor's second clone sees. The crates must already be fetched (cargo fetch).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
single=false
if [ "${1:-}" = "--single" ]; then
  single=true
  shift
  new="${1:?REV}"
  out="${2:-/tmp/cold-build}"
else
  base="${1:?BASE_REV}"
  new="${2:?NEW_REV}"
  out="${3:-/tmp/cold-build}"
fi
rm -rf "$out"
mkdir -p "$out"
printf 'machine: %s cores; load average before: %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"

# The cargo arguments of the clone's `cargo xtask` alias, as a build: `run --quiet --package
# xtask [--no-default-features] --` becomes `build --quiet --package xtask [...]`.
alias_build_args() {
  local line
  line="$(grep -E '^xtask *= *"' "$1/.cargo/config.toml")"
  line="${line#*\"}"
  line="${line%\"*}"
  line="${line% --}"
  printf '%s\n' "build${line#run}"
}

build() {
  local name="$1" rev="$2" args
  git clone -q "$here" "$out/$name"
  git -C "$out/$name" checkout -q "$rev"
  args="$(alias_build_args "$out/$name")"
  echo "$name: cargo $args --timings" >"$out/$name.cmd"
  # shellcheck disable=SC2086 # the alias's words
  (cd "$out/$name" && CARGO_TARGET_DIR="$out/$name-target" /usr/bin/time -f '%e %U %S %M' \
    -o "$out/$name.time" nice -n 10 cargo $args --timings >"$out/$name.log" 2>&1)
  # The timings report lands in the target dir's cargo-timings/.
  cp "$out/$name-target"/cargo-timings/cargo-timing.html "$out/$name-timing.html" 2>/dev/null || true
}

report() {
  local name="$1" wall user sys rss
  read -r wall user sys rss <"$out/$name.time"
  printf '%-4s %-12s wall %7.1f s  cpu %7.1f s  (peak rustc RSS %s MiB)  [%s]\n' "$name" \
    "$(git -C "$out/$name" rev-parse --short HEAD)" "$wall" "$(echo "$user + $sys" | bc -l)" \
    "$((rss / 1024))" "$(cat "$out/$name.cmd")"
}

# Wall and CPU of one `cargo xtask …` in a built clone.
timed_xtask() {
  local name="$1" label="$2" wall user sys
  shift 2
  (cd "$out/$name" && CARGO_TARGET_DIR="$out/$name-target" /usr/bin/time -f '%e %U %S' \
    -o "$out/$name.step" cargo xtask "$@" >/dev/null 2>>"$out/$name.log")
  read -r wall user sys <"$out/$name.step"
  printf '     then %-34s wall %7.1f s  cpu %7.1f s\n' "$label" "$wall" "$(echo "$user + $sys" | bc -l)"
}

if $single; then
  build new "$new"
  printf 'load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
  report new
  timed_xtask new "cargo xtask pin --help" pin --help
  timed_xtask new "cargo xtask validate --help" validate --help
  timed_xtask new "cargo xtask pin --help" pin --help
else
  build base "$base" &
  build new "$new" &
  wait
  printf 'load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
  report base
  report new
  read -r bw bu bs _ <"$out/base.time"
  read -r nw nu ns _ <"$out/new.time"
  awk -v bw="$bw" -v nw="$nw" -v bc="$(echo "$bu + $bs" | bc -l)" -v nc="$(echo "$nu + $ns" | bc -l)" \
    'BEGIN {printf "new / base: wall %.2f, cpu %.2f; on an idle 2-core machine the wall time is about the cpu time / 2 plus the serial tail (see the timings reports)\n", nw / bw, nc / bc}'
fi
# The built binaries stay, for speed comparisons of the dev builds.
for name in base new; do
  cp "$out/$name-target/debug/xtask" "$out/$name-xtask" 2>/dev/null || true
done
rm -rf "$out"/base "$out"/new "$out"/base-target "$out"/new-target
echo "reports:" "$out"/*-timing.html
