#!/usr/bin/env bash
# Side-by-side: `cargo xtask diff-check` vs `git diff --check` on a repository with a typical
# change (one master config edited in a topic commit, one changelog entry appended in the
# working tree, one trailing space each), base = merge-base of HEAD with origin/main.
#
# usage: bench/diff.sh [TREE] [RUNS]
#   TREE  the benchmark tree copied into a scratch repository (default: ../shared/corpus/
#         inferencex-aug2026 when present, else the bundled inferencex-e2e/). Not modified.
#   RUNS  timed runs per tool (default 31); the median is reported. NO_BUILD=1 skips the build.
#   LOOSE=1  every object loose (no pack for the base's history; see below).
# The reference tool is the machine's `git` (its version is printed). Needs bash 5 (its clock),
# python3 (to drop both binaries from the page cache) and shuf.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
here="$root"
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
tree="${1:-}"
if [[ -z "$tree" ]]; then
  if [[ -d "$root/../shared/corpus/inferencex-aug2026" ]]; then
    tree="$root/../shared/corpus/inferencex-aug2026"
  else
    tree="$root/inferencex-e2e"
  fi
fi
runs="${2:-31}"

if [[ -z "${NO_BUILD:-}" ]]; then (cd "$root" && cargo build --quiet --release --package xtask); fi
xtask="$root/target/release/xtask"

scratch_dir
# Both programs as they rest on disk. A binary the linker has just written sits in the page
# cache as it was written, and starting it cost ~0.3 ms more than the same bytes read back
# (docs/performance.md, "diff-check's start"); git's was installed long ago. So xtask is
# copied here, and both files are flushed and dropped from the cache: the first runs read
# them back by readahead, as any installed program is.
cp "$xtask" "$work/xtask"
xtask="$work/xtask"
python3 - "$xtask" "$(command -v git)" <<'PY'
import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
PY
repo="$work/repo"
mkdir -p "$repo"
cp -R "$tree/." "$repo/"
cd "$repo"
g() { git -c user.name=bench -c user.email=bench@example.invalid "$@"; }
g init -q -b main
g add -A
g commit -q -m base
g update-ref refs/remotes/origin/main HEAD
# A clone holds the fetched history in a pack; only the contributor's own commits are loose.
# LOOSE=1 keeps every object loose instead (each tree a file to open and inflate), the layout
# this bench measured before; libgit2 walks every tree of the base, git skips the ones its
# index's cache tree vouches for, so that layout widens the gap (docs/performance.md).
if [[ -z "${LOOSE:-}" ]]; then g repack -adq; fi
g checkout -q -b topic
config="$(ls configs/*master*.yaml | head -n 1)"
printf '# bench: tuned search space \n' >> "$config"
g commit -q -am "topic: edit $config"
changelog="$(ls perf-changelog.yaml 2>/dev/null || true)"
if [[ -n "$changelog" ]]; then
  printf '\n- config-keys:\n    - bench-key\n  description:\n    - "bench entry" \n  pr-link: https://github.com/x/y/pull/1\n' >> "$changelog"
else
  printf 'bench \n' >> "$config"
fi

echo "tree: $tree ($(git ls-files | wc -l) tracked files, $(du -sh . | cut -f1)); objects: $(if [[ -n "${LOOSE:-}" ]]; then echo "all loose"; else echo "base packed, topic loose"; fi); git: $(git --version)"
base="$(git merge-base HEAD origin/main)"
echo "--- git diff --check $base"
git diff --check "$base" || true
echo "--- xtask diff-check (default base)"
"$xtask" diff-check --repo . || true

# A real clone's index is not "racily clean"; ours was written in the same second as the files,
# which would make both tools re-hash every file. Let the clock move on and refresh it.
sleep 1
git update-index -q --refresh || true

# Runs the tools interleaved, each round in a new random order, so machine load hits all of
# them alike, then prints each one's median wall time in ms. With a fixed order (git's two
# lines, then ours) the same binaries read ~4 % worse for xtask (docs/performance.md,
# "diff-check's start").
declare -A samples
names=(git_sh git_plain ours ours_json)
run_one() {
  case "$1" in
    git_sh) sh -c 'git diff --check "$(git merge-base HEAD origin/main)"' ;;
    git_plain) git diff --check "$base" ;;
    ours) "$xtask" diff-check --repo . ;;
    ours_json) "$xtask" diff-check --repo . --format json ;;
  esac
}
for ((i = 0; i < runs; i++)); do
  for n in $(printf '%s\n' "${names[@]}" | shuf); do
    # bash's own clock (microseconds): `$(date)` was a process of its own inside every sample.
    t0=${EPOCHREALTIME/./}
    run_one "$n" >/dev/null 2>&1 || true
    t1=${EPOCHREALTIME/./}
    samples[$n]+="$((t1 - t0)) "
  done
done
median() { tr ' ' '\n' <<<"${samples[$1]}" | grep . | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'; }
git_ms=$(median git_sh)
git_plain_ms=$(median git_plain)
ours_ms=$(median ours)
ours_json_ms=$(median ours_json)
echo
echo "median of $runs interleaved runs (ms), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  git merge-base + git diff --check (sh):  $git_ms"
echo "  git diff --check <base> (one process):   $git_plain_ms"
echo "  xtask diff-check (human):                $ours_ms"
echo "  xtask diff-check --format json:          $ours_json_ms"
awk -v a="$ours_ms" -v b="$git_plain_ms" 'BEGIN {printf "  ratio xtask / git diff --check:          %.2f\n", a / b}'
awk -v a="$ours_ms" -v b="$git_ms" 'BEGIN {printf "  ratio xtask / (merge-base + diff --check): %.2f\n", a / b}'
