"""Runs `srtctl dry-run` (and, on request, the mock runtime's launch commands) for a batch of
recipes in one Python process, for infx's differential tests (docs/recipe.md, "Random
differential"). Input: a JSON file of cases [{"recipe": text, "file": name, "selector": str|null,
"mock": bool}]; output: one JSON line per case on stdout with the exit code, the error text,
the schema dump of every variant srtctl accepted and, for "mock" cases, the srun launches
srtctl's mock runtime makes for every accepted variant (workers and frontends; command, nodes,
environment), recorded as the golden corpus recorded them (docs/recipe.md, "Launch commands").

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
            CONFIGS.append(config)
        return original(*args, **kwargs)

    submit.submit_with_orchestrator = recording
    return submit


CONFIGS = []


def _mock_nodes(config):
    """The node count sbatch would allocate (srtctl's submit: workers plus dedicated roles)."""
    total = config.total_nodes
    dedicated = sum(
        (
            bool(config.infra.etcd_nats_dedicated_node),
            bool(config.frontend.dedicated_node),
            bool(config.benchmark.client_dedicated_node),
        )
    )
    if dedicated:
        total += 1 if config.benchmark.colocate_with_frontend else dedicated
    return max(1, total)


def mock_launches(config, workdir):
    """Worker and frontend srun launches of srtctl's mock runtime for one validated config.

    Model and container paths that are not Hugging Face ids or images are pointed at dummy
    files named like the originals, as the golden corpus's mock srtslurm.yaml did."""
    import dataclasses
    import threading

    from srtctl.cli.do_sweep import SweepOrchestrator
    from srtctl.core.runtime import RuntimeContext
    from srtctl.mock import MockOptions, mock_infrastructure

    model = config.model
    path = os.path.expandvars(model.path)
    changes = {}
    if not path.startswith("hf:"):
        name = Path(path).name or "model"
        fake = workdir / "models" / name
        fake.mkdir(parents=True, exist_ok=True)
        changes["path"] = str(fake)
    container = os.path.expandvars(model.container or "")
    if container.startswith("/") or container.startswith("./"):
        fake = workdir / "containers" / (Path(container).name or "image.sqsh")
        fake.parent.mkdir(parents=True, exist_ok=True)
        fake.touch()
        changes["container"] = str(fake)
    if changes:
        config = dataclasses.replace(config, model=dataclasses.replace(model, **changes))
    nodes = tuple(f"node-{i + 1:02d}" for i in range(_mock_nodes(config)))
    calls = []

    def record(*args, **kwargs):
        from srtctl.mock import FakePopen

        cmd = kwargs.get("command") or (args[0] if args else [])
        calls.append(
            {
                "command": [placeholder(str(c)) for c in (cmd if isinstance(cmd, list) else [cmd])],
                "nodelist": list(kwargs.get("nodelist") or []),
                "env": {str(k): placeholder(str(v)) for k, v in (kwargs.get("env_to_set") or {}).items()},
            }
        )
        return FakePopen(cmd=list(cmd) if isinstance(cmd, list) else [str(cmd)], output=None, duration_s=0)

    out_dir = workdir / "mock-out"
    log_dir = str(out_dir / "logs")

    def placeholder(text):
        # The golden corpus's placeholder for the mock job's log directory.
        return text.replace(log_dir, "<LOG_DIR>")

    options = MockOptions(child_duration_s=0, phase_pause_s=0, nodelist=nodes)
    keys = ["SLURM_JOB_ID", "SLURM_JOBID", "SLURM_NODELIST", "SLURM_NNODES", "SRTCTL_OUTPUT_DIR"]
    prior = {k: os.environ.get(k) for k in keys}
    os.environ.update(
        {
            "SLURM_JOB_ID": "4242",
            "SLURM_JOBID": "4242",
            "SLURM_NODELIST": ",".join(nodes),
            "SLURM_NNODES": str(len(nodes)),
            "SRTCTL_OUTPUT_DIR": str(out_dir),
        }
    )
    from unittest.mock import patch

    targets = [
        "srtctl.core.slurm.start_srun_process",
        "srtctl.cli.mixins.worker_stage.start_srun_process",
        "srtctl.cli.mixins.frontend_stage.start_srun_process",
        "srtctl.frontends.dynamo.start_srun_process",
        "srtctl.frontends.sglang.start_srun_process",
        "srtctl.frontends.vllm.start_srun_process",
        "srtctl.frontends.trtllm_serve.start_srun_process",
    ]
    # Readiness waits the mock does not short-circuit (the golden corpus cut them at 30 s).
    ready = ["srtctl.frontends.trtllm_serve.wait_for_health"]
    started = []
    try:
        with mock_infrastructure(options=options, output_dir=out_dir):
            for target in ready:
                with contextlib.suppress(AttributeError, ImportError, ModuleNotFoundError):
                    p = patch(target, lambda *_a, **_k: True)
                    p.start()
                    started.append(p)
            for target in targets:
                try:
                    p = patch(target, record)
                    p.start()
                    started.append(p)
                except (AttributeError, ImportError, ModuleNotFoundError):
                    continue
            runtime = RuntimeContext.from_config(config, job_id="4242")
            orchestrator = SweepOrchestrator(config=config, runtime=runtime)
            orchestrator.start_all_workers()
            from srtctl.core.processes import ProcessRegistry

            orchestrator.start_frontend(ProcessRegistry(job_id="4242"), threading.Event())
    finally:
        for p in reversed(started):
            with contextlib.suppress(Exception):
                p.stop()
        for k, v in prior.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return calls


def run_case(submit, dumps, case, workdir):
    dumps.clear()
    CONFIGS.clear()
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
    result = {"exit": code, "stdout": out.getvalue(), "configs": list(dumps)}
    if case.get("mock") and code == 0:
        launches = []
        for config in list(CONFIGS):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                try:
                    launches.append({"calls": mock_launches(config, workdir)})
                except Exception as e:  # noqa: BLE001 - a run-time failure is an answer too
                    launches.append({"error": f"{type(e).__name__}: {e}"})
        result["launches"] = launches
    return result


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
