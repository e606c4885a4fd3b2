#!/usr/bin/env bash
# Benchmark: load + validate all master configs and runners.yaml of the August corpus,
# infx-config (Rust, release) vs a Python reference, side by side. Medians and ratio.
#
#   bench/config.sh [CORPUS_ROOT] [RUNS]
#     CORPUS_ROOT  tree with configs/{nvidia-master,amd-master,runners}.yaml
#                  (default ../shared/corpus/inferencex-aug2026)
#     RUNS         runs per side (default 15)
#
# Reference: upstream's own load+validate is Python 3 + PyYAML `yaml.safe_load` (the pure-Python
# SafeLoader) + pydantic v2 models (utils/matrix_logic/validation.py). The August version of that
# file is not available here (the stored upstream versions are either the older seq-len-configs
# schema or the October package, which needs infx.clusters and rejects August data), so the
# reference below reproduces its pipeline with the same libraries: safe_load of each file, the
# wildcard and duplicate-key checks of load_config_files, pydantic models with extra='forbid'
# mirroring the August entry schema (written from spec/config-schema.md), and the runner-label
# checks. Both sides run as fresh processes (interpreter/imports included for Python, process
# start included for Rust), and both also report in-process time of the load+validate call.
# Needs: python3 with pyyaml and pydantic (pip install pyyaml pydantic), cargo.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
corpus="${1:-$here/../shared/corpus/inferencex-aug2026}"
runs="${2:-15}"
[ -f "$corpus/configs/nvidia-master.yaml" ] || { echo "no configs/ under $corpus" >&2; exit 2; }

scratch_dir
cat > "$work/ref.py" <<'PY'
import sys, time
t0 = time.perf_counter()
from typing import Literal, Optional, Union
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

def _ver(v):
    if v is not None and v.startswith("image:"):
        raise ValueError("component version must be a release, package version, or source commit, not an image reference")
    return v

class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

class Component(Strict):
    name: str = Field(min_length=1)
    version: str = Field(min_length=1)
    _v = field_validator("version")(classmethod(lambda cls, v: _ver(v)))

class Backend(Strict):
    name: str = Field(min_length=1)
    version: Optional[str] = Field(default=None, min_length=1)
    _v = field_validator("version")(classmethod(lambda cls, v: _ver(v)))

def _conc(s):
    rng = s.conc_start is not None and s.conc_end is not None
    lst = s.conc_list is not None and len(s.conc_list) > 0
    if rng and lst: raise ValueError("both conc-list and conc-start/conc-end")
    if not rng and not lst: raise ValueError("need conc-list or conc-start and conc-end")
    if rng and (s.conc_start <= 0 or s.conc_end <= 0): raise ValueError("conc must be > 0")
    if rng and s.conc_start > s.conc_end: raise ValueError("conc-start > conc-end")
    if lst and not all(x > 0 for x in s.conc_list): raise ValueError("conc-list entries must be > 0")
    return s

def _t1(s):
    if s.tp % s.dcp_size: raise ValueError("tp must be divisible by dcp-size")
    return s

class Worker(Strict):
    num_worker: int = Field(alias="num-worker")
    tp: int
    pp: int = Field(default=1, gt=0, strict=True)
    dcp_size: int = Field(default=1, alias="dcp-size", gt=0, strict=True)
    pcp_size: int = Field(default=1, alias="pcp-size", gt=0, strict=True)
    ep: int
    dp_attn: bool = Field(alias="dp-attn")
    hardware: Optional[str] = Field(default=None, min_length=1)
    additional_settings: Optional[list[str]] = Field(default_factory=list, alias="additional-settings")
    _t = model_validator(mode="after")(lambda s: _t1(s))

class Conc(Strict):
    conc_start: Optional[int] = Field(default=None, alias="conc-start")
    conc_end: Optional[int] = Field(default=None, alias="conc-end")
    conc_list: Optional[list[int]] = Field(default=None, alias="conc-list")
    _c = model_validator(mode="after")(lambda s: _conc(s))

SPEC = Literal["mtp", "draft_model", "none"]

class EngineRow(Conc):
    """The engine fields a single-node row and an agentic row share (in this order)."""
    tp: int
    pp: int = Field(default=1, gt=0, strict=True)
    dcp_size: int = Field(default=1, alias="dcp-size", gt=0, strict=True)
    pcp_size: int = Field(default=1, alias="pcp-size", gt=0, strict=True)
    ep: Optional[int] = None
    dp_attn: Optional[bool] = Field(default=None, alias="dp-attn")
    spec_decoding: SPEC = Field(default="none", alias="spec-decoding")

class SingleRow(EngineRow):
    router: Optional[Component] = None
    _t = model_validator(mode="after")(lambda s: _t1(s))

def _hw(s):
    if bool(s.prefill.hardware) != bool(s.decode.hardware): raise ValueError("hardware on both or neither")
    return s

class MultiRow(Conc):
    spec_decoding: SPEC = Field(default="none", alias="spec-decoding")
    prefill: Worker
    decode: Worker
    router: Optional[Component] = None
    kv_p2p_transfer: Optional[str] = Field(default=None, alias="kv-p2p-transfer", min_length=1)
    _h = model_validator(mode="after")(lambda s: _hw(s))

def _agentic(s):
    pd = s.prefill is not None or s.decode is not None
    if (s.tp is not None) == pd or (pd and (s.prefill is None or s.decode is None)):
        raise ValueError("Agentic search-space entries must specify either tp or both prefill and decode")
    if s.tp is not None:
        if "kv_offloading" not in s.model_fields_set or s.kv_offloading is None:
            raise ValueError("Single-node agentic search-space entries must specify kv-offloading")
        _t1(s)
    else:
        if {"pp", "dcp_size", "pcp_size"} & s.model_fields_set:
            raise ValueError("Multinode agentic search-space entries cannot specify 'pp', 'dcp-size', 'pcp-size'")
        _hw(s)
    b = s.kv_offload_backend
    if b is not None and s.kv_offloading is None: raise ValueError("kv-offload-backend requires kv-offloading")
    if b is not None and s.kv_offloading == "none": raise ValueError("backend with kv-offloading none")
    if b is None and s.kv_offloading == "dram": raise ValueError("dram requires kv-offload-backend")
    return s

class AgenticRow(EngineRow):
    # An agentic row has tp (single node) or prefill and decode (multinode): _agentic checks.
    tp: Optional[int] = None
    prefill: Optional[Worker] = None
    decode: Optional[Worker] = None
    kv_offloading: Optional[Literal["none", "dram"]] = Field(default=None, alias="kv-offloading")
    kv_offload_backend: Optional[Backend] = Field(default=None, alias="kv-offload-backend")
    router: Optional[Component] = None
    kv_p2p_transfer: Optional[str] = Field(default=None, alias="kv-p2p-transfer", min_length=1)
    _a = model_validator(mode="after")(lambda s: _agentic(s))

class SingleFixed(Strict):
    isl: int
    osl: int
    search_space: list[SingleRow] = Field(alias="search-space")

class MultiFixed(Strict):
    isl: int
    osl: int
    search_space: list[MultiRow] = Field(alias="search-space")

def _k2(s):
    if s.dram_utilization is None and any(r.kv_offloading == "dram" for r in s.search_space):
        raise ValueError("kv-offloading='dram' requires dram-utilization with runner hardware metadata")
    return s

class Agentic(Strict):
    search_space: list[AgenticRow] = Field(alias="search-space")
    dram_utilization: Optional[float] = Field(default=None, alias="dram-utilization", gt=0, le=1)
    _k = model_validator(mode="after")(lambda s: _k2(s))

def _scen(s):
    if not s.fixed_seq_len and not s.agentic_coding: raise ValueError("At least one scenario type must be specified")
    return s

class SingleScen(Strict):
    fixed_seq_len: Optional[list[SingleFixed]] = Field(default=None, alias="fixed-seq-len")
    agentic_coding: Optional[list[Agentic]] = Field(default=None, alias="agentic-coding")
    _s = model_validator(mode="after")(lambda s: _scen(s))

class MultiScen(Strict):
    fixed_seq_len: Optional[list[MultiFixed]] = Field(default=None, alias="fixed-seq-len")
    agentic_coding: Optional[list[Agentic]] = Field(default=None, alias="agentic-coding")
    _s = model_validator(mode="after")(lambda s: _scen(s))

def _rows(s):
    for block in (s.scenarios.fixed_seq_len or []) + (s.scenarios.agentic_coding or []):
        yield from block.search_space

def _entry(s, multinode):
    rows = list(_rows(s))
    for f in ("router", "kv_p2p_transfer"):
        if getattr(s, f, None) is not None and any(getattr(r, f, None) is not None for r in rows):
            raise ValueError(f"{f} must be declared either at the top level or in search-space entries, not both")
    if not multinode and any(getattr(r, "kv_p2p_transfer", None) for r in rows):
        raise ValueError("kv-p2p-transfer is only valid when multinode=true")
    if multinode and s.disagg and s.kv_p2p_transfer is None and (not rows or any(r.kv_p2p_transfer is None for r in rows)):
        raise ValueError("disagg=true requires kv-p2p-transfer at the top level or in every search-space entry")
    if s.scenarios.agentic_coding and not s.runner.startswith("cluster:"):
        raise ValueError("Agentic master configs must use a 'cluster:<name>' runner")
    return s

class Base(Strict):
    image: str
    model: str
    model_prefix: str = Field(alias="model-prefix")
    precision: str
    framework: str
    runner: str
    router: Optional[Component] = None

class SingleEntry(Base):
    multinode: Literal[False]
    disagg: Literal[False] = False
    scenarios: SingleScen
    _e = model_validator(mode="after")(lambda s: _entry(s, False))

class MultiEntry(Base):
    multinode: Literal[True]
    disagg: bool = False
    kv_p2p_transfer: Optional[str] = Field(default=None, alias="kv-p2p-transfer", min_length=1)
    scenarios: MultiScen
    _e = model_validator(mode="after")(lambda s: _entry(s, True))

def load_config_files(files):
    merged = {}
    for f in files:
        with open(f) as fh:
            data = yaml.safe_load(fh)
        assert isinstance(data, dict), f"Config file '{f}' must contain a dictionary"
        for k in data:
            if "*" in k: raise ValueError(f"Wildcard '*' is not allowed in master config keys: '{k}'")
        dup = set(merged) & set(data)
        if dup: raise ValueError(f"Duplicate configuration keys found in '{f}': {', '.join(sorted(dup))}")
        merged.update(data)
    errors = 0
    for key, entry in merged.items():
        try:
            (MultiEntry if entry.get("multinode", False) else SingleEntry)(**entry)
        except ValidationError as e:
            errors += 1
            print(f"Master config entry '{key}' failed validation:\n{e}", file=sys.stderr)
    return merged, errors

def load_runner_file(f):
    with open(f) as fh:
        r = yaml.safe_load(fh)
    for k, v in r["labels"].items():
        if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
            raise ValueError(f"Runner config entry '{k}' must be a non-empty list of strings")
    for k, h in (r.get("hardware") or {}).items():
        assert h["gpus-per-node"] > 0
    return r

root = sys.argv[1]
t1 = time.perf_counter()
merged, errors = load_config_files([f"{root}/configs/nvidia-master.yaml", f"{root}/configs/amd-master.yaml"])
runners = load_runner_file(f"{root}/configs/runners.yaml")
labels = runners["labels"]
unknown = sum(1 for e in merged.values() if e.get("runner") not in labels)
t2 = time.perf_counter()
print(f"{(t2 - t1) * 1000:.3f} {len(merged)} entries {errors} invalid {unknown} unknown-runner imports_ms={(t1 - t0) * 1000:.1f}")
PY

[ -n "${NO_BUILD:-}" ] || echo "building the Rust side (release)…" >&2
release_build -p infx-config --example config_check
bin="$(release_dir)/examples/config_check"

now_ms() { date +%s%N | awk '{printf "%.3f", $1/1e6}'; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

: > "$work/rust_proc" ; : > "$work/rust_in" ; : > "$work/py_proc" ; : > "$work/py_in"
for _ in $(seq "$runs"); do
  s=$(now_ms); out=$("$bin" "$corpus" --bench 1); e=$(now_ms)
  awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f\n", e-s}' >> "$work/rust_proc"
  echo "$out" | awk '{print $1}' >> "$work/rust_in"
  s=$(now_ms); out=$(python3 "$work/ref.py" "$corpus" 2>/dev/null); e=$(now_ms)
  awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f\n", e-s}' >> "$work/py_proc"
  echo "$out" | awk '{print $1}' >> "$work/py_in"
done
# In-process repetitions of the Rust call (warm caches), for the steady-state number.
"$bin" "$corpus" --bench "$runs" | awk '{print $1}' > "$work/rust_warm"

rp=$(median < "$work/rust_proc"); ri=$(median < "$work/rust_in"); rw=$(median < "$work/rust_warm")
pp=$(median < "$work/py_proc"); pi=$(median < "$work/py_in")
echo "corpus: $corpus   runs: $runs"
echo "python reference result: $(python3 "$work/ref.py" "$corpus" 2>/dev/null)"
echo "infx-config result:      $("$bin" "$corpus" --bench 1)"
printf '%-44s %12s %12s %8s\n' "measure (median, ms)" "python" "infx" "ratio"
printf '%-44s %12s %12s %8s\n' "fresh process, wall (start..exit)" "$pp" "$rp" "$(awk -v a="$pp" -v b="$rp" 'BEGIN {printf "%.1fx", a/b}')"
printf '%-44s %12s %12s %8s\n' "in-process load+validate (first call)" "$pi" "$ri" "$(awk -v a="$pi" -v b="$ri" 'BEGIN {printf "%.1fx", a/b}')"
printf '%-44s %12s %12s\n' "in-process load+validate (repeated calls)" "-" "$rw"
pmin=$(sort -g "$work/py_proc" | head -1); rmin=$(sort -g "$work/rust_proc" | head -1)
printf '%-44s %12s %12s %8s\n' "fresh process, wall, best run (context)" "$pmin" "$rmin" "$(awk -v a="$pmin" -v b="$rmin" 'BEGIN {printf "%.1fx", a/b}')"
echo "load average during the run: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
