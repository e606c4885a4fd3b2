//! Mocker workers (`python3 -m dynamo.mocker`) as srtctl launches them (docs/recipe.md,
//! "Rendering"): the simulation knobs always, the optional ones only when set away from their
//! defaults, then the mode's `mocker_config` entries as flags.

use super::engine_args;
use crate::coerce::{to_bool, to_float, to_int};
use crate::pystr::{py_float, py_str};
use infx_yaml::{Mapping, Node};

/// The argv of one mocker process. `backend` is `backend` (schema 1) or `engine` (schema 2).
pub(super) fn command(
    backend: Option<&Node>,
    mode: &str,
    model_arg: &str,
    bootstrap: Option<u32>,
    args: Option<&Mapping>,
) -> Vec<String> {
    let knob = |k: &str| backend.and_then(|b| b.get(k)).filter(|x| !x.is_null());
    let float = |k: &str, default: f64| {
        knob(k)
            .and_then(|n| to_float(n).ok())
            .and_then(|j| j.as_f64())
            .unwrap_or(default)
    };
    let int = |k: &str, default: i64| {
        knob(k)
            .and_then(|n| to_int(n).ok())
            .and_then(|j| j.as_i64())
            .unwrap_or(default)
    };
    let flag = |k: &str| {
        knob(k)
            .and_then(|n| to_bool(n).ok())
            .and_then(|j| j.as_bool())
            .unwrap_or(true)
    };
    let mut argv: Vec<String> = ["python3", "-m", "dynamo.mocker", "--model-path"]
        .map(String::from)
        .to_vec();
    argv.push(model_arg.to_string());
    if mode != "agg" {
        argv.extend(["--disaggregation-mode".into(), mode.to_string()]);
    }
    if let (Some(port), "prefill") = (bootstrap, mode) {
        argv.extend(["--bootstrap-ports".into(), port.to_string()]);
    }
    let engine_type = knob("engine_type").map_or_else(|| "vllm".into(), py_str);
    argv.extend(["--engine-type".into(), engine_type]);
    argv.extend([
        "--speedup-ratio".into(),
        py_float(float("speedup_ratio", 100.0)),
    ]);
    for (k, default) in [
        ("data_parallel_size", 1),
        ("num_gpu_blocks_override", 16384),
        ("max_num_seqs", 256),
        ("max_num_batched_tokens", 8192),
    ] {
        argv.extend([
            format!("--{}", k.replace('_', "-")),
            int(k, default).to_string(),
        ]);
    }
    let decode_ratio = float("decode_speedup_ratio", 1.0);
    if decode_ratio != 1.0 {
        argv.extend(["--decode-speedup-ratio".into(), py_float(decode_ratio)]);
    }
    if knob("block_size").is_some() {
        argv.extend(["--block-size".into(), int("block_size", 0).to_string()]);
    }
    if int("num_workers", 1) > 1 {
        argv.extend(["--num-workers".into(), int("num_workers", 1).to_string()]);
    }
    for k in ["startup_time", "kv_transfer_bandwidth"] {
        if knob(k).is_some() {
            argv.extend([
                format!("--{}", k.replace('_', "-")),
                py_float(float(k, 0.0)),
            ]);
        }
    }
    if let Some(dtype) = knob("kv_cache_dtype") {
        argv.extend(["--kv-cache-dtype".into(), py_str(dtype)]);
    }
    if !flag("enable_prefix_caching") {
        argv.push("--no-enable-prefix-caching".into());
    }
    if !flag("enable_chunked_prefill") {
        argv.push("--no-enable-chunked-prefill".into());
    }
    if let Some(p) = knob("preemption_mode") {
        argv.extend(["--preemption-mode".into(), py_str(p)]);
    }
    if let Some(a) = args {
        argv.extend(engine_args(a, &[]));
    }
    argv
}

#[cfg(test)]
mod tests {
    use super::command;

    fn backend(yaml: &str) -> infx_yaml::Node {
        infx_yaml::parse_str(std::path::Path::new("b.yaml"), yaml).expect("parses")
    }

    #[test]
    fn defaults_and_disaggregated_prefill() {
        let b = backend("type: mocker\nspeedup_ratio: 50\n");
        let argv = command(Some(&b), "prefill", "/model", Some(7200), None).join(" ");
        assert_eq!(
            argv,
            "python3 -m dynamo.mocker --model-path /model --disaggregation-mode prefill \
             --bootstrap-ports 7200 --engine-type vllm --speedup-ratio 50.0 \
             --data-parallel-size 1 --num-gpu-blocks-override 16384 --max-num-seqs 256 \
             --max-num-batched-tokens 8192"
        );
    }

    #[test]
    fn optional_knobs_only_when_set() {
        let b = backend(
            "decode_speedup_ratio: 2\nblock_size: 64\nnum_workers: 2\nstartup_time: 1.5\n\
             kv_cache_dtype: fp8\nenable_prefix_caching: false\npreemption_mode: swap\n",
        );
        let argv = command(Some(&b), "decode", "/model", Some(7200), None).join(" ");
        assert!(
            argv.contains("--disaggregation-mode decode --engine-type"),
            "{argv}"
        );
        assert!(!argv.contains("--bootstrap-ports"), "{argv}");
        for part in [
            "--decode-speedup-ratio 2.0",
            "--block-size 64",
            "--num-workers 2",
            "--startup-time 1.5",
            "--kv-cache-dtype fp8",
            "--no-enable-prefix-caching",
            "--preemption-mode swap",
        ] {
            assert!(argv.contains(part), "{part} missing from {argv}");
        }
        assert!(!argv.contains("chunked"), "{argv}");
    }
}
