#!/usr/bin/env bash
# Changelog benchmark: infx vs upstream InferenceX's Python path.
#
# Usage: bench/changelog.sh [CORPUS_DIR] [RUNS] [REF_DIR]
#   CORPUS_DIR  the shared corpus (default: ../shared/corpus beside the workspace, or $INFX_CORPUS)
#   RUNS        repetitions per measurement (default 7); medians are reported
#   REF_DIR     optional: a directory OUTSIDE this repository holding upstream's strict layer
#               (validate_perf_changelog.py's read_git_file/parse_changelog/compare_entries/
#               validate_raw_change and ChangelogEntry, copied from SemiAnalysisAI/InferenceX)
#               plus a driver `strict_one.py BASE HEAD` that runs them in the current clone.
#               When given, upstream's strict step is timed side by side on this machine
#               (python3 with pyyaml + pydantic) instead of taken from the recorded figure.
#
# What is measured (release build, wall clock, this machine):
#   1. one commit, gate + strict + plan, in one process:
#        xtask changelog check --mode both --main --plan-out FILE --base P --head C
#      on the tip of the history bundle (upstream #2707, original 843c6254), whose plan is a golden.
#   2. the full replay of the bundle: strict + gate + key verdicts for all 831 changelog commits
#        xtask changelog replay (2 threads = this machine's cores)
#
# Reference: the upstream Python tooling is NOT installed on this machine, so the reference
# figures are the upstream timings recorded in the corpus (measured by the corpus authors on a
# 2-vCPU VM with CPython 3.11/3.12, pydantic 2.14.4, PyYAML 6.0.4):
#   - goldens/changelog-plan/cases.tsv, column median_s of case 843c6254ff69:
#       process_changelog.py on that same commit (the plan step of the gate)
#   - goldens/changelog-verdicts/README.txt, "Strict per commit (in-process, both sides parsed):
#       median 0.99 s" and "The whole run of 831 commits took 35 minutes wall" (2 workers)
# The one-commit reference = plan median + strict median (the CLI gate's newline check and the
# second generator subprocess are left out, which favours upstream).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
corpus="${1:-${INFX_CORPUS:-$here/../shared/corpus}}"
runs="${2:-7}"
bundle="$corpus/inferencex-aug2026-changelog-history.bundle"
[ -f "$bundle" ] || { echo "bench/changelog.sh: $bundle not found" >&2; exit 2; }

cargo build --quiet --release -p xtask --manifest-path "$here/Cargo.toml"
x="$here/target/release/xtask"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
git clone -q --no-checkout "$bundle" "$tmp/h" 2>/dev/null

# Tip commit and its parent (rewritten ids of upstream 843c6254 and 1845f605).
head=439ed905c19c959288c9310e2f9ec49ac9e253c5
base=24fbd3c891c1783dca27471dbf3cfb546e944f56

median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m}'; }
now() { date +%s.%N; }

one=()
for _ in $(seq "$runs"); do
  t0=$(now)
  "$x" changelog check --repo "$tmp/h" --base "$base" --head "$head" --mode both --main \
    --dialect aug --plan-out "$tmp/plan.json" >/dev/null
  t1=$(now)
  one+=("$(echo "$t1 - $t0" | bc -l)")
done
ours_one=$(printf '%s\n' "${one[@]}" | median)

# The plan must be upstream's (refs aside: the golden records the original ids).
python3 - "$tmp/plan.json" "$corpus/goldens/changelog-plan/843c6254ff69/output.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d["changelog_metadata"].pop("base_ref"); d["changelog_metadata"].pop("head_ref")
sys.exit(0 if a == b else "plan differs from the golden")
EOF

replay=()
for _ in $(seq "$(( runs < 3 ? runs : 3 ))"); do
  t0=$(now)
  "$x" changelog replay --repo "$tmp/h" --dialect aug >/dev/null
  t1=$(now)
  replay+=("$(echo "$t1 - $t0" | bc -l)")
done
ours_replay=$(printf '%s\n' "${replay[@]}" | median)

ref_plan=$(awk -F'\t' '$1=="843c6254ff69" {print $6}' "$corpus/goldens/changelog-plan/cases.tsv")
ref_strict=0.99
strict_src="recorded, in-process median"
if [ -n "${3:-}" ]; then
  py=()
  for _ in $(seq "$runs"); do
    t0=$(now)
    (cd "$tmp/h" && python3 "$3/strict_one.py" "$base" "$head" >/dev/null)
    t1=$(now)
    py+=("$(echo "$t1 - $t0" | bc -l)")
  done
  ref_strict=$(printf '%s\n' "${py[@]}" | median)
  strict_src="measured here, python3 process, median of $runs [${py[*]}]"
fi
ref_one=$(echo "$ref_plan + $ref_strict" | bc -l)
ref_replay=$((35 * 60))

printf 'machine: %s cores, load average %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'one commit (gate+strict+plan): infx median %ss over %s runs [%s]\n' "$ours_one" "$runs" "${one[*]}"
printf '  upstream: plan %ss (recorded) + strict %ss (%s) = %ss  -> %.0fx faster\n' \
  "$ref_plan" "$ref_strict" "$strict_src" "$ref_one" "$(echo "$ref_one / $ours_one" | bc -l)"
printf 'full replay, 831 commits: infx median %ss [%s]\n' "$ours_replay" "${replay[*]}"
printf '  upstream (recorded): %ss wall with 2 workers  -> %.0fx faster; target < 30 s: %s\n' \
  "$ref_replay" "$(echo "$ref_replay / $ours_replay" | bc -l)" \
  "$(echo "$ours_replay < 30" | bc -l | sed 's/1/met/;s/0/NOT met/')"
