#!/usr/bin/env bash
# Benchmarks the review checks.
#
#   bench/review.sh [PARETO_REF] [RUNS]
#
# 1. `xtask review check` over the August corpus tree (../shared/corpus/inferencex-aug2026, or
#    $INFX_CORPUS/inferencex-aug2026): medians over RUNS runs of the load phase (validate's
#    load: every file read and parsed once) and of the checks (`review_tree`), as the command
#    reports them on stderr. The budget is < 50 ms for the checks.
# 2. Pareto coverage side by side: `xtask review pareto --format json` against the upstream
#    reference `infx/workflows/pareto_coverage.py` (SemiAnalysisAI/InferenceX@d73b652e) at
#    PARETO_REF (a copy kept OUTSIDE this repository, e.g. /tmp/ref/pareto_coverage.py), on a
#    seeded synthetic input of 400 curves x 40 points (ties, duplicates, invalid points, canonical
#    flags). Per-curve status/frontier/invalid counts must agree; wall-clock medians and the ratio
#    are printed. Skipped when PARETO_REF is not given.
#
# There is no reference implementation of the other checks: upstream decides them with an LLM
# verifier reading the PR (minutes per PR), so only our own timings are reported for them.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
ref=${1:-}
runs=${2:-21}
corpus=${INFX_CORPUS:-$here/../shared/corpus}
tree=$corpus/inferencex-aug2026
if [ ! -d "$tree" ]; then
  echo "SKIP: bench/review.sh: $tree not found" >&2
  exit 0
fi

cd "$here"
cargo build --release -q -p xtask
echo "== review check over $tree ($runs runs)"
python3 - "$here/target/release/xtask" "$tree" "$runs" <<'PY'
import re, statistics, subprocess, sys
xtask, tree, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
load, checks = [], []
for _ in range(runs):
    err = subprocess.run([xtask, "review", "check", "--root", tree, "--format", "json"],
                         capture_output=True, text=True).stderr
    m = re.search(r"load ([0-9.]+) ms, checks ([0-9.]+) ms", err)
    if not m:
        sys.exit(f"no timing in: {err}")
    load.append(float(m.group(1)))
    checks.append(float(m.group(2)))
print(f"runs={runs} load_median_ms={statistics.median(load):.2f} checks_median_ms={statistics.median(checks):.2f}")
PY

[ -n "$ref" ] || { echo "(pareto side-by-side skipped: pass the reference pareto_coverage.py path)"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/curves.json" <<'PY'
import json, random, sys
rng = random.Random(7)
curves = []
for c in range(400):
    pts = []
    for i in range(40):
        x = rng.choice([rng.uniform(0.5, 60.0), float(rng.randint(1, 30))])
        y = rng.choice([rng.uniform(10, 5000), float(rng.randint(1, 50) * 100)])
        p = {"x": x, "y": y}
        if i % 17 == 0:
            p["x"] = 0
        if c % 9 == 0:
            p["isOnNormalizedInteractivityFrontier"] = rng.random() < 0.7
        pts.append(p)
    pts.append(dict(pts[3]))
    curves.append({"key": f"curve-{c}", "points": pts})
json.dump(curves, open(sys.argv[1], "w"))
PY
python3 - "$ref" "$here/target/release/xtask" "$work/curves.json" "$runs" <<'PY'
import json, statistics, subprocess, sys, time
ref, ours, inp, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def run_ref():
    with open(inp) as f:
        return subprocess.run([sys.executable, ref], stdin=f, capture_output=True, text=True, check=True).stdout
def run_ours():
    return subprocess.run([ours, "review", "pareto", "--format", "json", inp], capture_output=True, text=True, check=True).stdout
def timed(fn):
    ts = []
    for _ in range(runs):
        t = time.perf_counter(); out = fn(); ts.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ts), out
tr, rout = timed(run_ref)
to, oout = timed(run_ours)
r = {c["key"]: (c["status"], c["frontierPoints"], c["invalidPoints"], c["canonicalRestriction"]) for c in json.loads(rout)}
o = {}
for line in oout.splitlines():
    c = json.loads(line)
    o[c["key"]] = (c["status"], c["frontierPoints"], c["invalidPoints"], c["canonicalRestriction"])
agree = sum(1 for k in r if o.get(k) == r[k])
print(f"== pareto: {agree}/{len(r)} curves agree with the reference")
print(f"reference python median {tr:.1f} ms, xtask median {to:.1f} ms, ratio {tr / to:.1f}x ({runs} runs)")
sys.exit(0 if agree == len(r) else 1)
PY
