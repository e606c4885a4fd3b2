#!/usr/bin/env bash
# Rename-only changes, side by side with `git diff --check` on the same change: a topic commit
# moves N files of the August tree's benchmarks/multi_node/ (topped up with generated recipe
# copies, each its own blob) under inferencex-e2e/, the "move configs to inferencex-e2e/" kind of
# pull request. Cases: N = 60, 470 and 2000 exact renames, and 470 renames of which every tenth
# also gains a line (with a trailing space: one diff-check finding each), so the similarity pass
# has work. Timed as whole processes, tools interleaved in a new random order each round,
# medians and CPU medians reported with the load average. Targets (issue #44): at 2000 renames
# diff-check within 1.5× git diff --check, validate ≤ 0.5 s (docs/performance.md, "Renames").
#
#   bench/renames.sh [RUNS]        (default 7 rounds; corpus: $INFX_CORPUS or ../shared/corpus)
#   NO_BUILD=1       reuse the release binary already built
#   BEFORE=PATH      also time another xtask binary (e.g. one built from main) in the same rounds
#   KEEP_WORK=1      keep the repositories (printed at the end)
# The repositories are made in a new temporary directory, which must not be inside a git work
# tree (git would find the enclosing repository's settings and objects instead of failing
# loudly): the script refuses to run there. Needs git, python3.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
runs="${1:-7}"
august_corpus
release_build -p xtask --no-default-features
bin="$(release_dir)/xtask"
before="${BEFORE:-}"
if [ -n "$before" ] && [ ! -x "$before" ]; then echo "BEFORE=$before is not an executable" >&2; exit 2; fi
scratch_dir
g() { git -c user.email=b@example.com -c user.name=bench -c core.autocrlf=false "$@"; }

# make_repo DIR N EDIT_EVERY: the base (August tree + generated copies) committed on main and
# packed, as a clone's history is; on branch topic one commit moving N files, every
# EDIT_EVERY-th (0: none) with a line appended.
make_repo() {
  local repo="$1" n="$2" every="$3"
  mkdir -p "$repo"
  cp -R "$aug/." "$repo/"
  python3 - "$repo" <<'PY'
import os, sys
repo = sys.argv[1]
src = os.path.join(repo, "benchmarks", "multi_node")
real = sorted(os.path.join(t, x) for t, _, xs in os.walk(src) for x in xs)
# Enough distinct blobs for 2000 moves: recipe copies with their own first line.
for i in range(2000 - len(real)):
    s = real[i % len(real)]
    d = os.path.join(src, "generated", f"g{i // 100:02d}", f"{i:04d}-" + os.path.basename(s))
    os.makedirs(os.path.dirname(d), exist_ok=True)
    with open(s, "rb") as f, open(d, "wb") as out:
        out.write(f"# generated copy {i}\n".encode() + f.read())
PY
  g -C "$repo" init -q -b main
  g -C "$repo" add -A
  g -C "$repo" commit -q -m base
  g -C "$repo" repack -adq
  g -C "$repo" update-ref refs/remotes/origin/main HEAD
  g -C "$repo" checkout -q -b topic
  python3 - "$repo" "$n" "$every" <<'PY'
import os, sys
repo, n, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
src = os.path.join(repo, "benchmarks", "multi_node")
gen = os.path.join(src, "generated")
files = lambda top, skip: sorted(os.path.join(t, x) for t, _, xs in os.walk(top) for x in xs
                                 if not (skip and t.startswith(gen)))
moved = (files(src, True) + files(gen, False))[:n]
assert len(moved) == n, len(moved)
for i, p in enumerate(moved):
    d = os.path.join(repo, "inferencex-e2e", os.path.relpath(p, repo))
    os.renames(p, d)
    if every and i % every == 0:
        with open(d, "ab") as f:
            f.write(b"# bench: moved and edited \n")
PY
  g -C "$repo" add -A
  g -C "$repo" commit -q -m "topic: move $n files"
  # A real clone's index is not "racily clean" (see bench/diff.sh): let the clock move on.
  sleep 1
  git -C "$repo" update-index -q --refresh || true
}

cases=(exact60:60:0 exact470:470:0 exact2000:2000:0 mixed470:470:10)
for c in "${cases[@]}"; do
  IFS=: read -r name n every <<<"$c"
  make_repo "$work/$name" "$n" "$every"
done
printf 'machine: %s cores, load average %s; git: %s\n' "$(nproc)" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" "$(git --version)"

python3 - "$bin" "$work" "$runs" "$before" "${cases[@]}" <<'PY'
import json, os, random, re, statistics, subprocess, sys, time
bin, work, runs, before = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
names = [c.split(":")[0] for c in sys.argv[5:]]
def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True).stdout
cmds = {}
for name in names:
    repo = f"{work}/{name}"
    b = git(repo, "merge-base", "HEAD", "origin/main").strip()
    status = git(repo, "diff", "--name-status", "-M", b)
    kinds = {}
    for l in status.splitlines():
        k = l[0]
        kinds[k] = kinds.get(k, 0) + 1
    print(f"{name}: git diff --name-status -M: {dict(sorted(kinds.items()))}")
    cmds[(name, "git diff --check")] = ["git", "-C", repo, "diff", "--check", b]
    tools = [("", bin)] + ([("before: ", before)] if before else [])
    for label, exe in tools:
        cmds[(name, label + "xtask diff-check")] = [exe, "diff-check", "--repo", repo, "--base", b]
        cmds[(name, label + "xtask validate")] = [exe, "validate", "--root", repo, "--base", b]
    # The findings must be git's: same lines, whichever binary.
    g = subprocess.run(cmds[(name, "git diff --check")], capture_output=True, text=True).stdout
    git_lines = sorted(re.findall(r"^(\S+?:\d+): ", g, re.M))
    for label, exe in tools:
        out = subprocess.run([exe, "diff-check", "--repo", repo, "--base", b, "--format", "json"],
                             capture_output=True, text=True).stdout
        ours = []
        for line in out.splitlines():
            d = json.loads(line) if line.startswith("{") else {}
            if str(d.get("code", "")).startswith("diff/"):
                ours.append(f"{d.get('path')}:{d.get('line')}")
        ours.sort()
        print(f"  {label or 'after: '}diff-check findings {len(ours)}, git's {len(git_lines)}:"
              f" {'same' if ours == git_lines else 'DIFFERENT'}")
times = {k: [] for k in cmds}
cpu = {k: [] for k in cmds}
order = list(cmds)
for _ in range(runs):
    random.shuffle(order)
    for k in order:
        t = time.perf_counter()
        p = subprocess.Popen(cmds[k], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, ru = os.wait4(p.pid, 0)
        times[k].append(time.perf_counter() - t)
        # CPU time (user + system) is what a loaded machine inflates least.
        cpu[k].append(ru.ru_utime + ru.ru_stime)
print(f"\nmedians of {runs} interleaved rounds, load average after: "
      f"{' '.join(open('/proc/loadavg').read().split()[:3])}")
for name in names:
    gm, gc = statistics.median(times[(name, "git diff --check")]), statistics.median(cpu[(name, "git diff --check")])
    print(f"{name}:")
    for (n, tool), v in times.items():
        if n != name:
            continue
        m, c = statistics.median(v), statistics.median(cpu[(n, tool)])
        ratio = "" if tool == "git diff --check" else f"  ×git {m / gm:5.2f} (cpu {c / gc:5.2f})"
        print(f"  {tool:28s} {m:7.3f} s  cpu {c:7.3f} s{ratio}")
if "exact2000" in names:
    g = statistics.median(times[("exact2000", "git diff --check")])
    d = statistics.median(times[("exact2000", "xtask diff-check")])
    v = statistics.median(times[("exact2000", "xtask validate")])
    print(f"targets at 2000 renames: diff-check ≤ 1.5× git: {'met' if d <= 1.5 * g else 'NOT met'}"
          f" ({d / g:.2f}×); validate ≤ 0.5 s: {'met' if v <= 0.5 else 'NOT met'} ({v:.3f} s)")
# What validate did on the largest change (its step lines, each binary), so the figures are
# not of empty runs and show where the time goes.
for k in [k for k in cmds if k[0] == "exact2000" and k[1].endswith("xtask validate")]:
    out = subprocess.run(cmds[k], capture_output=True, text=True)
    print(f"\nexact2000, {k[1]}'s steps (one run):")
    print("\n".join("  " + l for l in (out.stdout + out.stderr).splitlines()
                    if re.match(r"^[a-z-]+ {2,}", l) or l.startswith("validate:")))
PY
if [ -n "${KEEP_WORK:-}" ]; then echo "repositories kept under $work"; fi
