#!/usr/bin/env bash
# Benchmark: `cargo xtask validate` (release) on
#   1. the whole August corpus tree (../shared/corpus/inferencex-aug2026, every check that
#      applies offline; outside git, so the whole tree is checked) — target < 1 s;
#   2. a typical one-config change: the August tree committed in a temporary git repository,
#      one master-config entry edited and one changelog entry appended in the working tree —
#      target < 100 ms;
#   3. the bundled inferencex-e2e tree on a clean checkout (whole tree + last changelog commit).
# Fresh process per run (process start included), runs interleaved, medians reported.
# There is no reference tool for the whole job (upstream runs several tools by hand), so these
# are absolute figures; the per-step ratios are in bench/{config,matrix,recipes,changelog,image,diff}.sh.
#
#   bench/validate.sh [RUNS]      (default 15; corpus: $INFX_CORPUS or ../shared/corpus)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-15}"
corpus="${INFX_CORPUS:-$here/../shared/corpus}"
aug="$corpus/inferencex-aug2026"
[ -f "$aug/configs/nvidia-master.yaml" ] || { echo "no August corpus under $corpus" >&2; exit 2; }
if [ -z "${NO_BUILD:-}" ]; then (cd "$here" && cargo build --quiet --release -p xtask); fi
bin="$here/target/release/xtask"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# 2. A git repository holding the August tree under inferencex-e2e/, then a one-config change.
repo="$work/repo"
mkdir -p "$repo"
cp -r "$aug" "$repo/inferencex-e2e"
git -C "$repo" init -q -b main
git -C "$repo" -c user.email=b@example.com -c user.name=bench add -A
git -C "$repo" -c user.email=b@example.com -c user.name=bench commit -q -m base
git -C "$repo" checkout -q -b change
python3 - "$repo/inferencex-e2e" <<'PY'
import re, sys
root = sys.argv[1]
p = root + "/configs/nvidia-master.yaml"
text = open(p).read()
# Edit the first concurrency list of the first entry: the typical "add a point" change.
m = re.search(r"conc-list: \[([0-9, ]+)\]", text)
new = m.group(0)[:-1] + ", 512]"
text = text[: m.start()] + new + text[m.end():]
open(p, "w").write(text)
key = next(l[:-1] for l in text.splitlines() if l and not l[0].isspace() and not l.startswith("#") and l.endswith(":"))
cl = root + "/perf-changelog.yaml"
with open(cl, "a") as f:
    f.write(f"\n- config-keys:\n    - {key}\n  description:\n    - Add a point\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/9999\n")
PY

python3 - "$bin" "$aug" "$repo/inferencex-e2e" "$here/inferencex-e2e" "$runs" <<'PY'
import statistics, subprocess, sys, time
bin, aug, change_tree, bundled, runs = sys.argv[1:]
runs = int(runs)
cases = [
    ("whole August corpus (no git: whole tree)", [bin, "validate", "--root", aug], 1000.0),
    ("one-config change in a git repo of the August tree", [bin, "validate", "--root", change_tree], 100.0),
    ("bundled inferencex-e2e (clean checkout)", [bin, "validate", "--root", bundled], None),
]
times = {c[0]: [] for c in cases}
for _ in range(runs):
    for name, cmd, _t in cases:
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[name].append((time.perf_counter() - t) * 1000)
for name, cmd, target in cases:
    med = statistics.median(times[name])
    verdict = "" if target is None else (f"  (target < {target:.0f} ms: {'met' if med < target else 'NOT met'})")
    print(f"{name:55s} median {med:8.1f} ms  min {min(times[name]):8.1f} ms{verdict}")
# What the one-config run checked (its summary lines), so the figure is not of an empty run.
out = subprocess.run(cases[1][1], capture_output=True, text=True)
print("\none-config change, summary:\n" + "\n".join(l for l in out.stdout.splitlines() if l[:11].strip() in
      {"change", "yaml", "config", "changelog", "matrix", "recipe", "image", "diff-check", "review", "validate:"}))
PY
