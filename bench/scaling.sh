#!/usr/bin/env bash
# Scaling: `xtask validate` (release, whole tree, no git) on synthetic trees K = 1, 2, 4, 8 times
# the August corpus — every master-config entry duplicated under new keys (`KEY-xI`) and every
# srt-slurm recipe copied under new directories (`srt-slurm-recipes/xI/…`) — with wall time, CPU
# time (user + system: what a loaded machine inflates least) and peak RSS per K (GNU time),
# medians of RUNS fresh processes, a least-squares linear fit (a + b·K, with R²) printed for
# each, and an SVG plot of the CPU and RSS points and fits. The reference for "linear" is
# the fit itself (there is no upstream tool doing the whole job), and the YAML bytes per K.
#
#   bench/scaling.sh [RUNS] [SVG_OUT]   (default 5 runs, docs/perf-scaling.svg;
#                                         corpus: $INFX_CORPUS or ../shared/corpus; NO_BUILD=1)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
runs="${1:-5}"
svg="${2:-$here/docs/perf-scaling.svg}"
august_corpus
[ -x /usr/bin/time ] || { echo "bench/scaling.sh needs GNU time (/usr/bin/time) for peak RSS" >&2; exit 2; }
release_build -p xtask
bin="$(release_dir)/xtask"
scratch_dir

python3 - "$aug" "$work" <<'PY'
import os, re, shutil, sys
aug, work = sys.argv[1], sys.argv[2]
top_key = re.compile(r"^([A-Za-z0-9][^\s:#]*):\s*$")
def sections(text):
    """Top-level `KEY:` blocks of a master config, each with the lines up to the next one."""
    head, out, cur = [], [], None
    for line in text.splitlines(keepends=True):
        m = top_key.match(line)
        if m:
            cur = [m.group(1), [line]]
            out.append(cur)
        elif cur is None:
            head.append(line)
        else:
            cur[1].append(line)
    return "".join(head), out
for k in (1, 2, 4, 8):
    dst = os.path.join(work, f"k{k}")
    shutil.copytree(aug, dst)
    for name in os.listdir(os.path.join(dst, "configs")):
        if not name.endswith("-master.yaml"):
            continue
        p = os.path.join(dst, "configs", name)
        head, secs = sections(open(p).read())
        body = [head]
        for i in range(k):
            for key, lines in secs:
                first = lines[0] if i == 0 else lines[0].replace(f"{key}:", f"{key}-x{i}:", 1)
                block = first + "".join(lines[1:])
                body.append(block if block.endswith("\n") else block + "\n")
        open(p, "w").write("".join(body))
    recipes = []
    for top, _, names in os.walk(os.path.join(dst, "benchmarks")):
        if "srt-slurm-recipes" in top:
            recipes += [os.path.join(top, x) for x in names if x.endswith(".yaml")]
    for i in range(1, k):
        for src in recipes:
            head, tail = src.split("srt-slurm-recipes" + os.sep, 1)
            out = os.path.join(head, "srt-slurm-recipes", f"x{i}", tail)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            shutil.copyfile(src, out)
PY

printf 'machine: %s cores, load average %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$bin" "$work" "$runs" "$svg" <<'PY'
import os, statistics, subprocess, sys
bin, work, runs, svg = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
ks = [1, 2, 4, 8]
samples = {k: [] for k in ks}
for _ in range(runs):
    for k in ks:
        tf = os.path.join(work, "time.txt")
        subprocess.run(["/usr/bin/time", "-f", "%e %M %U %S", "-o", tf, bin, "validate", "--root",
                        os.path.join(work, f"k{k}")], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        wall, rss, user, sys_ = open(tf).read().split()[-4:]
        samples[k].append((float(wall), int(rss) / 1024, float(user) + float(sys_)))
def yaml_bytes(k):
    n = 0
    for top, _, names in os.walk(os.path.join(work, f"k{k}")):
        n += sum(os.path.getsize(os.path.join(top, x)) for x in names if x.endswith((".yaml", ".yml")))
    return n
def fit(xs, ys):
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    ss = sum((y - my) ** 2 for y in ys)
    r2 = 1 - sum((y - a - b * x) ** 2 for x, y in zip(xs, ys)) / ss if ss else 1.0
    return a, b, r2
wall = [statistics.median(s[0] for s in samples[k]) for k in ks]
rss = [statistics.median(s[1] for s in samples[k]) for k in ks]
cpu = [statistics.median(s[2] for s in samples[k]) for k in ks]
for k, w, c, r in zip(ks, wall, cpu, rss):
    print(f"K={k}: {yaml_bytes(k) / 1e6:6.2f} MB of YAML  validate median wall {w:6.3f} s  cpu {c:6.3f} s  peak RSS {r:7.1f} MiB")
fw, fc, fr = fit(ks, wall), fit(ks, cpu), fit(ks, rss)
print(f"fit wall = {fw[0]:.3f} + {fw[1]:.3f}*K s   (R^2 {fw[2]:.4f})")
print(f"fit CPU  = {fc[0]:.3f} + {fc[1]:.3f}*K s   (R^2 {fc[2]:.4f})")
print(f"fit RSS  = {fr[0]:.1f} + {fr[1]:.1f}*K MiB (R^2 {fr[2]:.4f})")
print(f"load average after the runs: {open('/proc/loadavg').read().split()[:3]}")

# The plot: two panels (wall, RSS) of the medians and their fitted lines.
W, H, pad = 720, 300, 50
def panel(x0, title, ys, f, unit):
    top = max(max(ys), f[0] + f[1] * 8) * 1.1
    sx = lambda k: x0 + pad + (k / 8) * (W / 2 - 2 * pad)
    sy = lambda v: H - pad - (v / top) * (H - 2 * pad)
    parts = [f'<text x="{x0 + W / 4}" y="20" text-anchor="middle" font-size="14">{title}</text>',
             f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(8)}" y2="{sy(0)}" stroke="black"/>',
             f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(0)}" y2="{sy(top)}" stroke="black"/>',
             f'<line x1="{sx(0)}" y1="{sy(f[0])}" x2="{sx(8)}" y2="{sy(f[0] + 8 * f[1])}" stroke="#d62728" stroke-dasharray="4 3"/>']
    for k in ks:
        parts.append(f'<text x="{sx(k)}" y="{H - pad + 16}" text-anchor="middle" font-size="11">{k}x</text>')
    for i in range(5):
        v = top * i / 4
        parts.append(f'<text x="{sx(0) - 6}" y="{sy(v) + 4}" text-anchor="end" font-size="10">{v:.2f}</text>')
    for k, v in zip(ks, ys):
        parts.append(f'<circle cx="{sx(k)}" cy="{sy(v)}" r="4" fill="#1f77b4"/>')
    parts.append(f'<text x="{x0 + W / 4}" y="{H - 8}" text-anchor="middle" font-size="11">'
                 f'{unit} = {f[0]:.2f} + {f[1]:.3f}·K (R² {f[2]:.3f})</text>')
    return parts
body = panel(0, "validate CPU time (s) vs tree size", cpu, fc, "s") + \
       panel(W / 2, "peak RSS (MiB) vs tree size", rss, fr, "MiB")
with open(svg, "w") as out:
    out.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif">\n'
              '<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n")
print(f"plot: {svg}")
PY
