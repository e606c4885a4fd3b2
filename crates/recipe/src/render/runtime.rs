//! Layouts both dry-runs accept that srtctl's runtime then refuses at launch (docs/recipe.md,
//! "Runtime-only faults"): a vLLM data-parallel role whose data × tensor × pipeline parallel
//! sizes need another GPU count than the role's workers have (`gpus_per_<role>`), and a size
//! written as a string (`data-parallel-size: "2"`), which srtctl multiplies as written. Each is
//! a warning: the recipe is valid, the job would crash. Read from the roles alone, so
//! validate's recipe step needs no rendering for them.

use super::vllm::{VllmJob, VllmRole};
use super::{count, roles};
use crate::codes;
use crate::recipe::Variant;
use infx_report::Diagnostic;

/// The runtime-only faults of a variant's vLLM roles, as warnings located at the size.
pub(crate) fn runtime_warnings(v: &Variant) -> Vec<Diagnostic> {
    let t = &v.tree;
    let schema2 = t.get("schema").is_some();
    let gpn = count(t.get_path(&["resources", "gpus_per_node"]))
        .unwrap_or(4)
        .max(1);
    let (_, roles) = if schema2 {
        roles::schema2(t, gpn, &[])
    } else {
        roles::schema1(t, gpn, &[])
    };
    // `vllm serve` as the endpoint ignores data parallelism; per-GPU launches skip the check.
    let direct = crate::recipe::frontend_type(t) == "vllm";
    let engine_key = if schema2 { "engine" } else { "backend" };
    let per_gpu = t
        .get_path(&[engine_key, "dp_launch_mode"])
        .map(crate::pystr::py_str)
        .as_deref()
        == Some("per_gpu");
    if direct || per_gpu {
        return Vec::new();
    }
    let vroles: Vec<VllmRole> = roles
        .iter()
        .map(|r| VllmRole {
            mode: r.name,
            args: r.args,
            kv_events: None,
        })
        .collect();
    let job = VllmJob {
        roles: &vroles,
        direct,
        serve_binary: String::new(),
        model_arg: String::new(),
        served: String::new(),
        connector: None,
        per_gpu,
        set_cuda_visible_devices: false,
        request_plane: String::new(),
    };
    let mut out = Vec::new();
    for r in roles.iter().filter(|r| r.engine == "vllm" && r.workers > 0) {
        if job.dp_size(r.name).is_none() {
            continue;
        }
        let Some(args) = r.args else { continue };
        let key = ["data-parallel-size", "data_parallel_size"]
            .into_iter()
            .find(|k| args.get(k).is_some_and(|n| !n.is_null()))
            .unwrap_or("data-parallel-size");
        let Some(node) = args.get(key) else { continue };
        let path = if schema2 {
            format!("roles.{}.args.{key}", r.name)
        } else {
            let mode = if r.name == "agg" {
                "aggregated"
            } else {
                r.name
            };
            format!("backend.vllm_config.{mode}.{key}")
        };
        let short = r.name;
        let d = if let Some(why) = job.unmultipliable_size(r.name) {
            Diagnostic::warning(
                codes::RUNTIME_SIZE_TYPE,
                format!("{why}: both dry-runs accept it, but srtctl multiplies the sizes as written when it launches and fails"),
            )
            .with_help("write the size as a number, unquoted (data-parallel-size: 2)")
        } else if let Err(why) = job.written_sizes_fit(r.name, r.gpus.max(0) as usize) {
            Diagnostic::warning(
                codes::RUNTIME_GPUS,
                format!("{why}: both dry-runs accept it, but srtctl's runtime refuses the layout at launch"),
            )
            .with_help(format!(
                "make data × tensor × pipeline parallel equal the {short} worker's GPUs (gpus_per_{short})"
            ))
        } else {
            continue;
        };
        out.push(v.locate(&path, node.span, d));
    }
    out
}
