#!/usr/bin/env bash
# Dry-run of every srtctl-golden dry-run case: infx vs srtctl's recorded per-case wall times.
#
# srtctl itself is not installed on this machine, so the reference is the corpus's measured
# times (srtctl-golden/timings.tsv: one fresh `srtctl dry-run` process per case, Python 3.11.7,
# see recipes-schema1.md §11.6). infx is measured here two ways:
#   1. one process for all cases:  xtask dry-run --quiet <every case target>   (median of N runs)
#   2. one process per case, as srtctl was run                                   (median of N runs)
#
# usage: bench/recipes.sh [CORPUS_DIR] [RUNS]      (env XTASK_BIN: use this xtask binary)
#   CORPUS_DIR defaults to $INFX_CORPUS or <workspace>/../shared/corpus; RUNS defaults to 5.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-${INFX_CORPUS:-$root/../shared/corpus}}
runs=${2:-5}
golden=$corpus/srtctl-golden
[ -f "$golden/timings.tsv" ] || { echo "corpus not found at $corpus" >&2; exit 2; }

# XTASK_BIN: a prebuilt release xtask to measure instead of building one.
bin=${XTASK_BIN:-}
if [ -z "$bin" ]; then
  cargo build --release -q -p xtask --manifest-path "$root/Cargo.toml"
  bin=$root/target/release/xtask
fi

# Targets `<case dir>/<recipe file>[:<selector>]` and srtctl's time, for every dry-run case.
targets=()
srtctl_times=()
# (awk fills the empty selector column: `read` would collapse consecutive tabs)
while IFS=$'\t' read -r case_id command selector wall; do
  [ "$command" = "dry-run" ] || continue
  [ "$selector" = "-" ] && selector=
  dir=$golden/cases/$case_id
  file=$(cd "$dir" && ls -- *.yaml 2>/dev/null | grep -v '^srtslurm.yaml$' | head -n1 || true)
  [ -n "$file" ] || file=does-not-exist.yaml
  t=$dir/$file
  [ -n "$selector" ] && t="$t:$selector"
  targets+=("$t")
  srtctl_times+=("$wall")
done < <(awk -F'\t' 'NR > 1 {print $1 "\t" $2 "\t" ($3 == "" ? "-" : $3) "\t" $5}' "$golden/timings.tsv")

n=${#targets[@]}
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

one=()
for _ in $(seq "$runs"); do
  s=$(now); "$bin" dry-run --quiet "${targets[@]}" >/dev/null 2>&1 || true; e=$(now)
  one+=("$(echo "$e - $s" | bc -l)")
done
per=()
for _ in $(seq "$runs"); do
  s=$(now)
  for t in "${targets[@]}"; do "$bin" dry-run --quiet "$t" >/dev/null 2>&1 || true; done
  e=$(now)
  per+=("$(echo "$e - $s" | bc -l)")
done

srtctl_total=$(printf '%s\n' "${srtctl_times[@]}" | awk '{s+=$1} END {printf "%.3f", s}')
srtctl_median=$(printf '%s\n' "${srtctl_times[@]}" | median)
one_med=$(printf '%s\n' "${one[@]}" | median)
per_med=$(printf '%s\n' "${per[@]}" | median)

printf 'cases (dry-run): %d\n' "$n"
printf 'srtctl (recorded, timings.tsv): total %.3f s, median %.3f s per case\n' "$srtctl_total" "$srtctl_median"
printf 'infx, one process:      median of %d runs %.4f s total (%.3f ms per case)  -> %.0fx faster\n' \
  "$runs" "$one_med" "$(echo "$one_med * 1000 / $n" | bc -l)" "$(echo "$srtctl_total / $one_med" | bc -l)"
printf 'infx, process per case: median of %d runs %.4f s total (%.3f ms per case)  -> %.0fx faster\n' \
  "$runs" "$per_med" "$(echo "$per_med * 1000 / $n" | bc -l)" "$(echo "$srtctl_total / $per_med" | bc -l)"
