"""Runs upstream's sweep generator (`generate_sweep_configs.main`, with its input validation) on
cases read from stdin, one JSON object per line, in one Python process.

Used by xtask's config random differential (xtask-dev/src/conformance/config_random.rs); the first
argument is the unpacked `utils/matrix_logic/` directory of the reference InferenceX tools.
Each case: {"files": {"<relative path>": "<text>", ...}, "argv": ["test-config", ...]}; the
files are written into a fresh directory that is the working directory of the run, as the
workflows run the generator from the repository root. Each answer, one line:
  {"exit": <code>, "stdout": "<stdout>", "error": "<Type: message or argparse's stderr>"}
"""

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, sys.argv[1])

import generate_sweep_configs as generator  # noqa: E402


def answer(case, workdir):
    for entry in os.listdir(workdir):
        path = os.path.join(workdir, entry)
        if os.path.isdir(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    for rel, text in case["files"].items():
        path = os.path.join(workdir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    sys.argv = ["generate_sweep_configs.py", *case["argv"]]
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            generator.main()
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except Exception as e:  # noqa: BLE001 - an uncaught exception is exit 1, as python3 does
            err.write(f"{type(e).__name__}: {e}")
            code = 1
    return {"exit": code, "stdout": out.getvalue(), "error": err.getvalue()}


def main():
    with tempfile.TemporaryDirectory(prefix="matrix-diff-") as tmp:
        os.chdir(tmp)
        for line in sys.stdin:
            if not line.strip():
                continue
            result = answer(json.loads(line), tmp)
            sys.stdout.write(json.dumps(result) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
