#!/usr/bin/env bash
# Memory per input byte on hostile YAML shapes (issue 17: "memory per input line bounded"):
# peak RSS of one fresh `infx_yaml::load_file` process (crates/yaml/examples/load_one.rs, GNU
# time) on each shape at two sizes, minus the same process on an empty file, divided by the
# file's bytes. Linear shapes keep the same bytes-per-byte at both sizes; the alias and anchor
# shapes must end in `yaml/alias-budget` with little memory. For scale, the same files through
# PyYAML's C loader (`yaml.load(..., CSafeLoader)`, what upstream's tools use) when python3 has it.
#
#   bench/yaml-hostile.sh [MB...]     (default sizes 1 4, under 5 min on an idle machine; the loader refuses files > 16 MiB;
#                                      NO_BUILD=1 skips the release build)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 4)
[ -x /usr/bin/time ] || { echo "bench/yaml-hostile.sh needs GNU time (/usr/bin/time)" >&2; exit 2; }
if [ -z "${NO_BUILD:-}" ]; then (cd "$here" && cargo build --quiet --release -p infx-yaml --examples); fi
bin="$here/target/release/examples/load_one"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 - "$work" "${sizes[@]}" <<'PY'
import os, sys
work, sizes = sys.argv[1], [int(s) for s in sys.argv[2:]]
open(os.path.join(work, "empty.yaml"), "w").close()
def fill(unit, n):
    out, size, i = [], 0, 0
    while size < n:
        s = unit(i)
        out.append(s)
        size += len(s)
        i += 1
    return "".join(out)
for mb in sizes:
    n = mb * 1000 * 1000
    shapes = {
        "one-huge-line-scalar": "k: " + "a" * n + "\n",
        "one-huge-line-flow-list": "[" + "1," * (n // 2) + "1]\n",
        "many-tiny-lines": fill(lambda i: "- 1\n", n),
        "many-tiny-keys": fill(lambda i: f"k{i}: 1\n", n),
        "deep-legal-nesting": fill(lambda i: "- " + "[" * 250 + "1" + "]" * 250 + "\n", n),
        "many-anchors-and-aliases": "a:\n" + fill(lambda i: f"  - &a{i} x\n  - *a{i}\n", n),
        # Each anchor keeps a copy of what it names: 250 nested anchors over one big list.
        "nested-anchors-over-a-big-list": "".join(f"&n{i} [" for i in range(250))
            + fill(lambda i: "1,", n) + "1" + "]" * 250 + "\n",
        "billion-laughs": "a: &a [" + ",".join(["lol"] * 9) + "]\n"
            + "".join(f"{c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]\n"
                      for p, c in zip("abcdefgh", "bcdefghi"))
            + fill(lambda i: f"# padding {i}\n", n),
    }
    for name, text in shapes.items():
        with open(os.path.join(work, f"{name}@{mb}MB.yaml"), "w") as f:
            f.write(text)
PY

have_pyyaml=""
python3 -c 'import yaml; yaml.CSafeLoader' 2>/dev/null && have_pyyaml=1
peak() {  # peak RSS in KiB and the printed result of one command
  /usr/bin/time -f "%M" -o "$work/t" "$@" >"$work/out" 2>/dev/null || true
  echo "$(tail -1 "$work/t") $(head -c 60 "$work/out" | head -1)"
}
read -r base _ < <(peak "$bin" "$work/empty.yaml")
pybase=0
if [ -n "$have_pyyaml" ]; then
  read -r pybase _ < <(peak python3 -c 'import sys, yaml; yaml.load(open(sys.argv[1]), Loader=yaml.CSafeLoader)' "$work/empty.yaml")
fi
printf 'machine: %s cores, load average %s; empty-file baseline %d KiB (PyYAML %d KiB)\n' \
  "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$base" "$pybase"
printf '%-34s %6s %-20s %9s %8s %12s\n' shape MB result "peak MiB" "B/B" "PyYAML B/B"
for f in $(ls "$work"/*@*.yaml | sort -t@ -k1,1 -k2n); do
  name="$(basename "$f" .yaml)"
  bytes=$(stat -c %s "$f")
  read -r kib result < <(peak "$bin" "$f")
  py="-"
  if [ -n "$have_pyyaml" ]; then
    read -r pkib _ < <(peak python3 -c 'import sys, yaml; yaml.load(open(sys.argv[1]), Loader=yaml.CSafeLoader)' "$f")
    py=$(awk -v k="$pkib" -v b="$pybase" -v n="$bytes" 'BEGIN {printf "%.1f", (k - b) * 1024 / n}')
  fi
  printf '%-34s %6.1f %-20s %9.1f %8.1f %12s\n' "${name%@*}" "$(awk -v n="$bytes" 'BEGIN {print n / 1e6}')" \
    "$result" "$(awk -v k="$kib" 'BEGIN {print k / 1024}')" \
    "$(awk -v k="$kib" -v b="$base" -v n="$bytes" 'BEGIN {printf "%.1f", (k - b) * 1024 / n}')" "$py"
done
