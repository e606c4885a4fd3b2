#!/usr/bin/env bash
# Side-by-side: `cargo xtask diff-check` vs `git diff --check` on a repository with a typical
# change (one master config edited in a topic commit, one changelog entry appended in the
# working tree, one trailing space each), base = merge-base of HEAD with origin/main.
#
# usage: bench/diff.sh [TREE] [RUNS]
#   TREE  the benchmark tree copied into a scratch repository (default: ../shared/corpus/
#         inferencex-aug2026 when present, else the bundled inferencex-e2e/). Not modified.
#   RUNS  timed runs per tool (default 31); the median is reported.
# The reference tool is the machine's `git` (its version is printed).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tree="${1:-}"
if [[ -z "$tree" ]]; then
  if [[ -d "$root/../shared/corpus/inferencex-aug2026" ]]; then
    tree="$root/../shared/corpus/inferencex-aug2026"
  else
    tree="$root/inferencex-e2e"
  fi
fi
runs="${2:-31}"

cargo build --quiet --release --package xtask
xtask="$root/target/release/xtask"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
repo="$work/repo"
mkdir -p "$repo"
cp -R "$tree/." "$repo/"
cd "$repo"
g() { git -c user.name=bench -c user.email=bench@example.invalid "$@"; }
g init -q -b main
g add -A
g commit -q -m base
g update-ref refs/remotes/origin/main HEAD
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

echo "tree: $tree ($(git ls-files | wc -l) tracked files, $(du -sh . | cut -f1)); git: $(git --version)"
base="$(git merge-base HEAD origin/main)"
echo "--- git diff --check $base"
git diff --check "$base" || true
echo "--- xtask diff-check (default base)"
"$xtask" diff-check --repo . || true

# Median wall time in ms of RUNS runs of the given command (its exit status is ignored).
median_ms() {
  local times=()
  for ((i = 0; i < runs; i++)); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}

# Both sides start a process and compute the merge-base themselves where they can.
git_ms=$(median_ms sh -c 'git diff --check "$(git merge-base HEAD origin/main)"')
git_plain_ms=$(median_ms git diff --check "$base")
ours_ms=$(median_ms "$xtask" diff-check --repo .)
ours_json_ms=$(median_ms "$xtask" diff-check --repo . --format json)
echo
echo "median of $runs runs (ms):"
echo "  git merge-base + git diff --check (sh):  $git_ms"
echo "  git diff --check <base> (one process):   $git_plain_ms"
echo "  xtask diff-check (human):                $ours_ms"
echo "  xtask diff-check --format json:          $ours_json_ms"
awk -v a="$ours_ms" -v b="$git_plain_ms" 'BEGIN {printf "  ratio xtask / git diff --check:          %.2f\n", a / b}'
