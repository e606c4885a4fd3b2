#!/usr/bin/env bash
# Large changes, side by side with `git diff --check` on the same change: `xtask diff-check`
# and `xtask validate` on a repository of the August tree whose topic branch commits
#   text:   N new small text files (notes/bench/…/fileI.txt), and
#   yaml:   N new recipe files (copies of the August recipes under new directories),
# plus `git diff --check <base>` on each. Every step should be linear in the change: targets
# diff-check ≤ 2× git diff --check, validate ≤ 5 s in total (docs/diff.md, README).
# Fresh process per run, tools interleaved, medians reported.
# The recipe change is two commits (the first quarter of the files, then the rest), so that
# validate also runs on the last three quarters alone (`--base` the first commit, same work
# tree): the difference of the two peak RSS over the quarter is the memory per added recipe
# file (issue #44: at most 16 KiB; docs/performance.md, "Memory per added file (session 40)").
#
#   bench/large-change.sh [N] [RUNS]     (default 10000 paths, 5 runs; corpus: $INFX_CORPUS or
#                                          ../shared/corpus; NO_BUILD=1 skips the release build)
#   BEFORE=PATH      also run another xtask binary (e.g. one built from main) in the same rounds
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
n="${1:-10000}"
runs="${2:-5}"
if [ "$n" -lt 4 ]; then echo "N must be at least 4 (the change is split in quarters)" >&2; exit 2; fi
august_corpus
release_build -p xtask
bin="$(release_dir)/xtask"
before="${BEFORE:-}"
if [ -n "$before" ] && [ ! -x "$before" ]; then echo "BEFORE=$before is not an executable" >&2; exit 2; fi
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
    def commit_part(message):
        import subprocess
        git = ["git", "-c", "user.email=b@example.com", "-c", "user.name=bench", "-C", repo]
        subprocess.run(git + ["add", "-A"], check=True)
        subprocess.run(git + ["commit", "-q", "-m", message], check=True)
    for i in range(n):
        if i == n // 4:
            commit_part(f"topic: the first {i} of {n} yaml files")
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

python3 - "$bin" "$work" "$runs" "$n" "$before" <<'PY'
import random, statistics, subprocess, sys, time
bin, work, runs, n, before = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
def base(repo):
    return subprocess.run(["git", "-C", repo, "merge-base", "HEAD", "origin/main"],
                          capture_output=True, text=True, check=True).stdout.strip()
# The builds run: this one, and BEFORE's as "before …" in the same rounds.
builds = [("", bin)] + ([("before ", before)] if before else [])
cases = []
for kind in ("text", "yaml"):
    repo = f"{work}/{kind}"
    b = base(repo)
    cases.append((kind, "git diff --check", ["git", "-C", repo, "diff", "--check", b]))
    for label, x in builds:
        cases += [
            (kind, f"{label}xtask diff-check", [x, "diff-check", "--repo", repo, "--base", b]),
            (kind, f"{label}xtask validate", [x, "validate", "--root", repo, "--base", b]),
        ]
# The last three quarters of the recipe change alone: the first commit of the topic as base.
quarter = subprocess.run(["git", "-C", f"{work}/yaml", "rev-parse", "HEAD~1"],
                         capture_output=True, text=True, check=True).stdout.strip()
for label, x in builds:
    cases.append(("yaml", f"{label}xtask validate, 3/4", [x, "validate", "--root", f"{work}/yaml", "--base", quarter]))
import os
times = {(k, name): [] for k, name, _ in cases}
cpu = {(k, name): [] for k, name, _ in cases}
rss = {(k, name): [] for k, name, _ in cases}
for _ in range(runs):
    # A new order each round: no tool always runs after the same one.
    random.shuffle(cases)
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
mrss = {k: statistics.median(v) for k, v in rss.items()}
for kind in ("text", "yaml"):
    g, cg = med[(kind, "git diff --check")], cmed[(kind, "git diff --check")]
    print(f"{kind}: git diff --check median {g:7.3f} s  cpu {cg:7.3f} s")
    for label, _ in builds:
        d, cd = med[(kind, f"{label}xtask diff-check")], cmed[(kind, f"{label}xtask diff-check")]
        v, cv = med[(kind, f"{label}xtask validate")], cmed[(kind, f"{label}xtask validate")]
        print(f"{kind}: {label}xtask diff-check median {d:7.3f} s  cpu {cd:7.3f} s  ratio {d / g:5.2f}, cpu {cd / cg:5.2f} (target <= 2: {'met' if d <= 2 * g else 'NOT met'})")
        print(f"{kind}: {label}xtask validate   median {v:7.3f} s  cpu {cv:7.3f} s  (target <= 5 s: {'met' if v <= 5 else 'NOT met'})"
              f"  peak RSS {mrss[(kind, f'{label}xtask validate')] / 1024:.1f} MiB")
for label, _ in builds:
    whole, part = mrss[("yaml", f"{label}xtask validate")], mrss[("yaml", f"{label}xtask validate, 3/4")]
    per_file = (whole - part) / (n // 4)
    print(f"yaml: {label}xtask validate on the last 3/4 of the change  peak RSS {part / 1024:.1f} MiB:"
          f" {per_file:.1f} KiB per added recipe file (target <= 16: {'met' if per_file <= 16 else 'NOT met'})")
print(f"load average after the runs: {open('/proc/loadavg').read().split()[:3]}")
# What validate checked on each change (its step lines), so the figures are not of empty runs.
import re
for kind in ("text", "yaml"):
    cmd = next(c for k, name, c in cases if k == kind and name == "xtask validate")  # this build
    out = subprocess.run(cmd, capture_output=True, text=True)
    print(f"\n{kind} change, validate's steps (one run):")
    print("\n".join("  " + l for l in out.stdout.splitlines()
                    if re.match(r"^[a-z-]+ {2,}", l) or l.startswith("validate:")))
PY
if [ -n "${KEEP_WORK:-}" ]; then echo "repositories kept: $work/text $work/yaml"; fi
