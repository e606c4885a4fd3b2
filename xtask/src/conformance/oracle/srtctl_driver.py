"""Runs `srtctl dry-run` (and, on request, the mock runtime's launch commands) for a batch of
recipes in one Python process, for infx's differential tests (docs/recipe.md, "Random
differential"). Input: a JSON file of cases [{"recipe": text, "file": name, "selector": str|null,
"mock": bool}]; output: one JSON line per case on stdout with the exit code, the error text and
the schema dump of every variant srtctl accepted.

No network: the Hugging Face / registry HEAD probes are made to fail, as the golden corpus did.
"""

import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path


def _no_network(*_args, **_kwargs):
    raise OSError("network disabled for differential tests")


def _install_patches(dumps):
    import requests

    requests.head = _no_network
    requests.get = _no_network
    from srtctl.cli import submit
    from srtctl.core.schema import SrtConfig

    original = submit.submit_with_orchestrator

    def recording(*args, **kwargs):
        config = kwargs.get("config")
        if config is not None:
            dumps.append(SrtConfig.Schema().dump(config))
        return original(*args, **kwargs)

    submit.submit_with_orchestrator = recording
    return submit


def run_case(submit, dumps, case, workdir):
    dumps.clear()
    path = workdir / case["file"]
    path.write_text(case["recipe"])
    arg = case["file"] if not case.get("selector") else f"{case['file']}:{case['selector']}"
    sys.argv = ["srtctl", "dry-run", "-f", arg]
    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            submit.main()
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except Exception as e:  # noqa: BLE001 - an uncaught crash is a verdict too
            out.write(f"Error: uncaught {type(e).__name__}: {e}")
            code = 99
    path.unlink()
    return {"exit": code, "stdout": out.getvalue(), "configs": list(dumps)}


def main():
    cases = json.loads(Path(sys.argv[1]).read_text())
    dumps = []
    submit = _install_patches(dumps)
    with tempfile.TemporaryDirectory(prefix="srtctl-diff-") as tmp:
        workdir = Path(tmp)
        os.chdir(workdir)
        for case in cases:
            result = run_case(submit, dumps, case, workdir)
            result["id"] = case.get("id")
            sys.__stdout__.write(json.dumps(result, default=str) + "\n")
            sys.__stdout__.flush()


if __name__ == "__main__":
    main()
