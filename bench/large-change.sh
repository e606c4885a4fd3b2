#!/usr/bin/env bash
# Large changes, side by side with `git diff --check` on the same change: `xtask diff-check`
# and `xtask validate` on a repository of the August tree whose topic branch commits
#   text:   N new small text files (notes/bench/…/fileI.txt), and
#   yaml:   N new recipe files (copies of the August recipes under new directories),
# plus `git diff --check <base>` on each. Every step should be linear in the change: targets
# diff-check ≤ 2× git diff --check, validate ≤ 5 s in total (docs/diff.md, README).
# Fresh process per run, tools interleaved, medians reported.
#
#   bench/large-change.sh [N] [RUNS]     (default 10000 paths, 5 runs; corpus: $INFX_CORPUS or
#                                          ../shared/corpus; NO_BUILD=1 skips the release build)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
n="${1:-10000}"
runs="${2:-5}"
august_corpus
release_build -p xtask
bin="$(release_dir)/xtask"
# KEEP_WORK=1 keeps the two repositories (for profiling); they are printed at the end.
scratch_dir
g() { git -c user.email=b@example.com -c user.name=bench -c core.autocrlf=false "$@"; }

make_repo() {
  local repo="$1" kind="$2"
  mkdir -p "$repo"
  cp -R "$aug/." "$repo/"
  g -C "$repo" init -q -b main
  g -C "$repo" add -A
  g -C "$repo" commit -q -m base
  g -C "$repo" update-ref refs/remotes/origin/main HEAD
  g -C "$repo" checkout -q -b topic
  python3 - "$repo" "$kind" "$n" <<'PY'
import os, sys
repo, kind, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
if kind == "text":
    for i in range(n):
        d = os.path.join(repo, "notes", "bench", f"d{i // 500}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"file{i}.txt"), "w") as f:
            f.write(f"note {i}\nsecond line\nthird line\n")
else:
    recipes = []
    for top, _, names in os.walk(os.path.join(repo, "benchmarks")):
        if "srt-slurm-recipes" in top:
            recipes += [os.path.join(top, x) for x in names if x.endswith(".yaml")]
    recipes.sort()
    for i in range(n):
        src = recipes[i % len(recipes)]
        head, tail = src.split("srt-slurm-recipes" + os.sep, 1)
        dst = os.path.join(head, "srt-slurm-recipes", f"bench-copy{i // len(recipes)}", tail)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(src) as f, open(dst, "w") as out:
            out.write(f.read())
PY
  g -C "$repo" add -A
  g -C "$repo" commit -q -m "topic: $n $kind files"
  # A real clone's index is not "racily clean" (see bench/diff.sh): let the clock move on.
  sleep 1
  git -C "$repo" update-index -q --refresh || true
}

make_repo "$work/text" text
make_repo "$work/yaml" yaml
printf 'machine: %s cores, load average %s; git: %s; change: %s paths\n' "$(nproc)" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" "$(git --version)" "$n"

python3 - "$bin" "$work" "$runs" <<'PY'
import statistics, subprocess, sys, time
bin, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def base(repo):
    return subprocess.run(["git", "-C", repo, "merge-base", "HEAD", "origin/main"],
                          capture_output=True, text=True, check=True).stdout.strip()
cases = []
for kind in ("text", "yaml"):
    repo = f"{work}/{kind}"
    b = base(repo)
    cases += [
        (kind, "git diff --check", ["git", "-C", repo, "diff", "--check", b]),
        (kind, "xtask diff-check", [bin, "diff-check", "--repo", repo, "--base", b]),
        (kind, "xtask validate", [bin, "validate", "--root", repo, "--base", b]),
    ]
import os
times = {(k, name): [] for k, name, _ in cases}
cpu = {(k, name): [] for k, name, _ in cases}
rss = {(k, name): [] for k, name, _ in cases}
for _ in range(runs):
    for kind, name, cmd in cases:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, ru = os.wait4(p.pid, 0)
        times[(kind, name)].append(time.perf_counter() - t)
        # CPU time (user + system) is what a loaded machine inflates least.
        cpu[(kind, name)].append(ru.ru_utime + ru.ru_stime)
        rss[(kind, name)].append(ru.ru_maxrss)  # KiB on Linux
med = {k: statistics.median(v) for k, v in times.items()}
cmed = {k: statistics.median(v) for k, v in cpu.items()}
for kind in ("text", "yaml"):
    g, cg = med[(kind, "git diff --check")], cmed[(kind, "git diff --check")]
    d, cd = med[(kind, "xtask diff-check")], cmed[(kind, "xtask diff-check")]
    v, cv = med[(kind, "xtask validate")], cmed[(kind, "xtask validate")]
    print(f"{kind}: git diff --check median {g:7.3f} s  cpu {cg:7.3f} s")
    print(f"{kind}: xtask diff-check median {d:7.3f} s  cpu {cd:7.3f} s  ratio {d / g:5.2f}, cpu {cd / cg:5.2f} (target <= 2: {'met' if d <= 2 * g else 'NOT met'})")
    print(f"{kind}: xtask validate   median {v:7.3f} s  cpu {cv:7.3f} s  (target <= 5 s: {'met' if v <= 5 else 'NOT met'})"
          f"  peak RSS {statistics.median(rss[(kind, 'xtask validate')]) / 1024:.1f} MiB")
print(f"load average after the runs: {open('/proc/loadavg').read().split()[:3]}")
# What validate checked on each change (its step lines), so the figures are not of empty runs.
import re
for kind in ("text", "yaml"):
    cmd = next(c for k, name, c in cases if k == kind and name == "xtask validate")
    out = subprocess.run(cmd, capture_output=True, text=True)
    print(f"\n{kind} change, validate's steps (one run):")
    print("\n".join("  " + l for l in out.stdout.splitlines()
                    if re.match(r"^[a-z-]+ {2,}", l) or l.startswith("validate:")))
PY
if [ -n "${KEEP_WORK:-}" ]; then echo "repositories kept: $work/text $work/yaml"; fi
