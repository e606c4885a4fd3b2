"""Runs upstream's changelog functions on cases read from stdin, one JSON object per line.

Used by xtask's random differential (xtask-dev/src/conformance/changelog_random.rs); the first
argument is the unpacked `utils/` directory of the reference InferenceX tools. Each case:
  {"op": "strict", "base": <hex>, "head": <hex>, "pr": N}
  {"op": "resolve", "base": <hex>, "pr_side": <hex>, "main": <hex>, "pr": N}
Each answer: {"ok": true, "additions": a, "corrections": c} / {"ok": true, "result": <hex>} or
{"ok": false, "error": "<message>"}.
"""

import json
import sys

sys.path.insert(0, sys.argv[1])

import prepare_perf_changelog_merge as prepare  # noqa: E402
import validate_perf_changelog as validate  # noqa: E402


def answer(case):
    op = case["op"]
    dec = lambda k: bytes.fromhex(case[k])  # noqa: E731
    try:
        if op == "strict":
            base_raw, head_raw = dec("base"), dec("head")
            base = validate.parse_changelog(base_raw, "base perf-changelog.yaml")
            head = validate.parse_changelog(head_raw, "head perf-changelog.yaml")
            additions, corrections = validate.compare_entries(base, head, case["pr"])
            validate.validate_raw_change(base_raw, head_raw, len(additions), corrections)
            return {"ok": True, "additions": len(additions), "corrections": corrections}
        if op == "resolve":
            result = prepare.resolve_conflict_bytes(
                dec("base"),
                dec("pr_side"),
                dec("main"),
                case["pr"],
                "SemiAnalysisAI/InferenceX",
            )
            return {"ok": True, "result": result.hex()}
        return {"ok": False, "error": f"unknown op {op!r}"}
    except Exception as exc:  # every failure of upstream's functions is a verdict
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


for line in sys.stdin:
    if line.strip():
        print(json.dumps(answer(json.loads(line))), flush=True)
