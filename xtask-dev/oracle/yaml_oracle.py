"""PyYAML's answer for each YAML text: one JSON case a line on stdin ({"text": ...}), one JSON
answer a line on stdout. The YAML differential (xtask-dev/src/conformance/yaml_random.rs) compares
them with infx-yaml's load of the same text.

An answer is {"ok": true, "value": ...} or {"ok": false, "kind": <error class>, "problem":
<the problem text>, "index": <character index of the problem mark>}.
"""
import json
import sys

import yaml


def plain(v):
    # JSON has no timestamps or non-string keys: keep what the generator makes comparable.
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    return str(v)


def answer(text):
    try:
        return {"ok": True, "value": plain(yaml.safe_load(text))}
    except yaml.reader.ReaderError as e:
        return {"ok": False, "kind": "ReaderError", "problem": str(e).split("\n")[0],
                "index": e.position}
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        return {"ok": False, "kind": type(e).__name__, "problem": e.problem or "",
                "context": e.context or "", "index": mark.index if mark else -1}
    except RecursionError:
        return {"ok": False, "kind": "RecursionError", "problem": "", "index": -1}


for line in sys.stdin:
    case = json.loads(line)
    print(json.dumps(answer(case["text"])), flush=True)
