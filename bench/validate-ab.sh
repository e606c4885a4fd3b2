#!/usr/bin/env bash
# Before/after: two `xtask` binaries on bench/validate.sh's one-config change (the August tree
# committed in a temporary git repository and packed, LOOSE=1 for every object loose; one
# master-config entry edited and one changelog entry appended in the working tree), runs
# interleaved in one go, medians reported. Used to
# show what a change to validate costs (e.g. the contribution checks: impact, coverage, labels,
# binding records).
#
#   bench/validate-ab.sh BEFORE_BIN AFTER_BIN [RUNS]    (default 31; corpus: $INFX_CORPUS or ../shared/corpus)
#   WHOLE_TREE=1 bench/validate-ab.sh …                 the whole August tree outside git instead
#   BUNDLED=1 bench/validate-ab.sh …                    the one-config change on the bundled
#                                                        inferencex-e2e/ tree instead of August's
#
# BEFORE_BIN is typically main built into its own target dir:
#   git archive main | tar -x -C /tmp/main-src && (cd /tmp/main-src && CARGO_TARGET_DIR=/tmp/main-target cargo build --release -p xtask)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
before="${1:?before binary}"
after="${2:?after binary}"
runs="${3:-31}"
august_corpus

scratch_dir
repo="$work/repo"
what="one-config change"
src="$aug"
if [ "${BUNDLED:-0}" = 1 ]; then src="$here/inferencex-e2e"; what="one-config change (bundled tree)"; fi
one_config_change_repo "$src" "$repo"
tree="$repo/inferencex-e2e"
if [ "${WHOLE_TREE:-0}" = 1 ]; then
  # Outside any git repository: the whole tree, no history checks.
  aug_outside_git
  tree="$aug_copy"
  what="whole August tree"
fi

python3 - "$before" "$after" "$tree" "$runs" "$what" <<'PY'
import os, statistics, subprocess, sys, time
before, after, tree, runs, what = sys.argv[1:]
runs = int(runs)
cmds = {"before": [before, "validate", "--root", tree], "after": [after, "validate", "--root", tree]}
times = {k: [] for k in cmds}
cpu = {k: [] for k in cmds}
for _ in range(runs):
    for name, cmd in cmds.items():
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, ru = os.wait4(p.pid, 0)
        times[name].append((time.perf_counter() - t) * 1000)
        # CPU time (user + system) is less sensitive than wall time to a loaded machine.
        cpu[name].append((ru.ru_utime + ru.ru_stime) * 1000)
for name in cmds:
    print(f"{what}, {name:6s}: wall median {statistics.median(times[name]):7.1f} ms (min {min(times[name]):7.1f})"
          f"  cpu median {statistics.median(cpu[name]):7.1f} ms  ({runs} runs)")
d = statistics.median(times["after"]) - statistics.median(times["before"])
c = statistics.median(cpu["after"]) - statistics.median(cpu["before"])
print(f"after - before: wall {d:+.1f} ms, cpu {c:+.1f} ms (medians)")
for name, cmd in cmds.items():
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    print(f"\n{name}, summary:\n" + "\n".join(l for l in out.splitlines() if l[:11].strip() in
          {"change", "yaml", "config", "changelog", "coverage", "labels", "matrix", "recipe", "image", "diff-check", "review", "validate:"}))
PY
