# shellcheck shell=bash
# What the bench/ scripts share, sourced after each sets `here` (the workspace root):
#   here="$(cd "$(dirname "$0")/.." && pwd)"; . "$here/bench/lib.sh"

# `august_corpus`: sets `corpus` ($INFX_CORPUS, else ../shared/corpus beside the workspace) and
# `aug` (its August tree), or stops the script (exit 2) when the tree is not there.
august_corpus() {
  corpus="${INFX_CORPUS:-$here/../shared/corpus}"
  aug="$corpus/inferencex-aug2026"
  [ -f "$aug/configs/nvidia-master.yaml" ] || { echo "no August corpus under $corpus" >&2; exit 2; }
}

# `scratch_dir`: sets `work` to a new temporary directory, removed on exit (unless KEEP_WORK is
# set), or stops the script (exit 2) when it lies inside a git work tree: git would find the
# enclosing repository, and validate would judge a change there instead of the whole tree.
scratch_dir() {
  work="$(mktemp -d)"
  if [ -z "${KEEP_WORK:-}" ]; then trap 'rm -rf "$work"' EXIT; fi
  if git -C "$work" rev-parse --show-toplevel >/dev/null 2>&1; then
    echo "refusing: $work is inside the git work tree $(git -C "$work" rev-parse --show-toplevel);" \
      "set TMPDIR to a directory outside any repository" >&2
    exit 2
  fi
}

# `aug_outside_git`: sets `aug_copy` to a copy of the August tree below `work` (scratch_dir
# first), outside any repository wherever the corpus itself lies, so a whole-tree run is one.
aug_outside_git() {
  aug_copy="$work/outside/inferencex-aug2026"
  mkdir -p "$work/outside" && cp -R "$aug" "$aug_copy"
}

# `release_build CARGO_ARGS…`: `cargo build --quiet --release CARGO_ARGS…` in the workspace,
# unless NO_BUILD is set (it reuses the binaries already built, e.g. while the workspace is
# mid-edit).
release_build() {
  if [ -z "${NO_BUILD:-}" ]; then (cd "$here" && cargo build --quiet --release "$@"); fi
}

# `release_dir`: where cargo puts the release binaries (it honours CARGO_TARGET_DIR, relative
# to the workspace, as release_build runs cargo there).
release_dir() {
  local target="${CARGO_TARGET_DIR:-target}"
  case "$target" in
    /*) echo "$target/release" ;;
    *) echo "$here/$target/release" ;;
  esac
}

# `one_config_change_repo AUG REPO` (bench/validate.sh and bench/validate-ab.sh time validate on
# it): a new git repository REPO holding the tree AUG under inferencex-e2e/, committed on main
# and packed, as a clone's history is, then on branch `change` the typical one-config change in
# the working tree: one master-config entry edited, one changelog entry appended. LOOSE=1 leaves
# every object loose (each tree of the base a file to open and inflate), the layout these
# benches measured until session 35 (docs/performance.md, "Packed like a clone").
one_config_change_repo() {
  local aug="$1" repo="$2"
  mkdir -p "$repo"
  cp -r "$aug" "$repo/inferencex-e2e"
  git -C "$repo" init -q -b main
  git -C "$repo" -c user.email=b@example.com -c user.name=bench add -A
  git -C "$repo" -c user.email=b@example.com -c user.name=bench commit -q -m base
  if [ -z "${LOOSE:-}" ]; then git -C "$repo" repack -adq; fi
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
  # The index was written in the same second as the files, so every entry is "racily clean"
  # and each run would hash the whole tree (libgit2 walks and hashes them all), which no
  # real clone does. Let the clock move on and refresh the stat data, as bench/diff.sh does.
  sleep 1
  git -C "$repo" update-index -q --refresh || true
}
