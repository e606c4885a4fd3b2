//! `runners.yaml` in both shapes: [Aug] `labels` + `hardware`, [Oct] `labels` + `clusters`
//! (docs/config.md, "API"). Codes: `config/runners` (label lists, hardware values), `config/runners-inventory`
//! (cluster label ↔ record rules), plus the shared `unknown-key` / `missing-field` / `type`.

use crate::codes;
use crate::model::{HardwareFacts, RunnerInventory};
use crate::schema::{Ctx, join};
use infx_report::Span;
use infx_yaml::{Mapping, Node, Value};

const CLUSTER_KEYS: &[&str] = &[
    "gpus-per-node",
    "available-cpu-dram-mib",
    "arch",
    "models",
    "env",
    "scheduler",
    "slurm",
];
const SLURM_KEYS: &[&str] = &[
    "partition",
    "partitions",
    "account",
    "exclusive",
    "gres",
    "exclude",
    "volumes",
    "squash",
    "srt-slurm",
    "cpus-per-gpu",
    "cpus-per-task",
    "salloc-args",
    "srun-args",
];
/// Schedulers registered upstream (`infx.clusters.SCHEDULERS`).
const SCHEDULERS: &[&str] = &["slurm"];

pub(crate) fn check_runners(ctx: &mut Ctx, root: &Node) -> Option<RunnerInventory> {
    let Some(m) = root.as_map() else {
        ctx.error_help(
            codes::RUNNERS,
            root.span,
            "",
            "runners.yaml must be a mapping with 'labels' (and 'hardware' or 'clusters')",
            "write 'labels: {<label>: [<runner>, …]}'",
        );
        return None;
    };
    let oct = m.contains_key("clusters");
    let allowed: &[&str] = if oct {
        &["labels", "clusters"]
    } else {
        &["labels", "hardware"]
    };
    if !m.contains_key("labels") {
        // A flat (label-less) file: every top-level key would be a label.
        ctx.error_help(
            codes::RUNNERS,
            root.span,
            "",
            "runners.yaml has no 'labels' mapping (a flat label → runners file is not accepted)",
            "nest the labels under 'labels:'",
        );
        return None;
    }
    ctx.unknown_keys(m, allowed, "");
    let mut inv = RunnerInventory {
        oct_shape: oct,
        ..Default::default()
    };
    if let Some(lm) = m.get("labels").and_then(|n| ctx.map(n, "labels")) {
        for (k, v) in lm.iter_nodes() {
            let Some(label) = k.as_str() else {
                ctx.error(
                    codes::RUNNERS,
                    k.span,
                    "labels",
                    "label names must be strings",
                );
                continue;
            };
            let at = join("labels", label);
            let Some(items) = v.as_seq() else {
                ctx.error_help(
                    codes::RUNNERS,
                    v.span,
                    &at,
                    format!(
                        "Runner config entry '{label}' must be a list, got {}",
                        v.value.type_name()
                    ),
                    "write a list of runner names",
                );
                continue;
            };
            if items.is_empty() {
                ctx.error_help(
                    codes::RUNNERS,
                    v.span,
                    &at,
                    format!("Runner config entry '{label}' cannot be an empty list"),
                    "list at least one runner or remove the label",
                );
                continue;
            }
            let mut names = Vec::with_capacity(items.len());
            for it in items {
                match it.as_str() {
                    Some(s) => names.push(s.to_string()),
                    None => {
                        ctx.error(
                            codes::RUNNERS,
                            it.span,
                            &at,
                            format!(
                                "Runner config entry '{label}' must contain only strings, found {}",
                                it.value.type_name()
                            ),
                        );
                    }
                }
            }
            inv.labels.push((label.to_string(), names));
        }
    }
    if oct {
        if let Some(cm) = m.get("clusters").and_then(|n| ctx.map(n, "clusters")) {
            for (id, k, rec) in cm.iter() {
                let at = join("clusters", id);
                if let Some(h) = cluster_record(ctx, rec, &at, k.span) {
                    inv.hardware.push((format!("cluster:{id}"), h));
                }
            }
            inventory_rules(ctx, &inv, cm, m);
        }
    } else if let Some(hn) = m.get("hardware").filter(|n| !n.is_null())
        && let Some(hm) = ctx.map(hn, "hardware")
    {
        for (label, k, rec) in hm.iter() {
            let at = join("hardware", label);
            let Some(rm) = ctx.map(rec, &at) else {
                continue;
            };
            ctx.unknown_keys(rm, &["gpus-per-node", "available-cpu-dram-mib"], &at);
            let g = ctx.req_int(rm, "gpus-per-node", k.span, &at, true);
            // Both facts are required in an [Aug] hardware record, `null` included, as upstream's
            // generator requires them (docs/config.md, "Diagnostic codes"); only [Oct] cluster
            // records may omit the DRAM figure.
            let d = ctx.req_int(rm, "available-cpu-dram-mib", k.span, &at, true);
            inv.hardware.push((
                label.to_string(),
                HardwareFacts {
                    gpus_per_node: g,
                    available_cpu_dram_mib: d,
                },
            ));
        }
    }
    // Returned even when some records failed, so X5 can still look labels up.
    Some(inv)
}

fn cluster_record(ctx: &mut Ctx, rec: &Node, at: &str, key_span: Span) -> Option<HardwareFacts> {
    let rm = ctx.map(rec, at)?;
    ctx.unknown_keys(rm, CLUSTER_KEYS, at);
    let g = ctx.req_int(rm, "gpus-per-node", key_span, at, true);
    let d = ctx
        .opt_int(rm, "available-cpu-dram-mib", at, true)
        .ok()
        .flatten();
    // Only its type is checked; nothing here depends on the architecture.
    let _ = ctx.opt_str(rm, "arch", at, true);
    if let Some(env) = rm.get("env").filter(|n| !n.is_null()) {
        check_env(ctx, env, &join(at, "env"));
    }
    match ctx.req_str(rm, "scheduler", key_span, at, true) {
        Some(s) if !SCHEDULERS.contains(&s) => ctx.error_help(
            codes::VALUE,
            rm.get("scheduler").map(|n| n.span).unwrap_or(key_span),
            &join(at, "scheduler"),
            format!("unknown scheduler '{s}'"),
            format!("use one of: {}", SCHEDULERS.join(", ")),
        ),
        Some(s) => {
            // Only the chosen scheduler's sub-record may be present (it is the only one we know).
            match rm.get(s) {
                None => ctx.missing(key_span, at, s),
                Some(sub) => {
                    if let Some(sm) = ctx.map(sub, &join(at, s)) {
                        ctx.unknown_keys(sm, SLURM_KEYS, &join(at, s));
                        if let Some(sr_env) = sm.get("srt-slurm").and_then(|x| x.get("env")) {
                            check_env(ctx, sr_env, &join(at, "slurm.srt-slurm.env"));
                        }
                    }
                }
            }
        }
        None => {}
    }
    Some(HardwareFacts {
        gpus_per_node: g,
        available_cpu_dram_mib: d,
    })
}

/// Environment values reach jobs through `srun --export`, a comma-separated list.
fn check_env(ctx: &mut Ctx, env: &Node, at: &str) {
    let Some(em) = ctx.map(env, at) else { return };
    for (name, _, v) in em.iter() {
        if let Value::Str(s) = &v.value
            && s.contains(',')
        {
            ctx.error_help(
                codes::RUNNERS,
                v.span,
                &join(at, name),
                "environment values cannot contain commas (Slurm passes them in an srun --export list)",
                "remove the comma",
            );
        }
    }
}

/// CONFIGS.md inventory rules: every runner is in exactly one `cluster:<id>` label, every such
/// label has a `clusters.<id>` record; with `slurm.partitions`, every runner of the cluster has
/// exactly one allowed `partition:<name>` label and the default partition is allowed.
fn inventory_rules(ctx: &mut Ctx, inv: &RunnerInventory, clusters: &Mapping, root: &Mapping) {
    let labels_map = root.get("labels").and_then(Node::as_map);
    let span_of = |label: &str| {
        labels_map
            .and_then(|lm| lm.get_entry(label))
            .map(|(k, _)| k.span)
            .unwrap_or_default()
    };
    let mut runner_clusters: Vec<(&str, Vec<&str>)> = Vec::new();
    for (label, runners) in &inv.labels {
        let Some(id) = label.strip_prefix("cluster:") else {
            continue;
        };
        if !clusters.contains_key(id) {
            ctx.error_help(
                codes::RUNNERS_INVENTORY,
                span_of(label),
                &join("labels", label),
                format!("label '{label}' has no clusters.{id} record"),
                format!("add 'clusters: {{{id}: {{gpus-per-node: …, scheduler: slurm, …}}}}'"),
            );
        }
        for r in runners {
            match runner_clusters.iter_mut().find(|(n, _)| n == r) {
                Some((_, v)) => v.push(label),
                None => runner_clusters.push((r, vec![label])),
            }
        }
    }
    for (label, runners) in &inv.labels {
        if label.starts_with("cluster:") || label.starts_with("partition:") {
            continue;
        }
        for r in runners {
            if !runner_clusters.iter().any(|(n, _)| n == r) {
                ctx.error_help(
                    codes::RUNNERS_INVENTORY,
                    span_of(label),
                    &join("labels", label),
                    format!("runner '{r}' is in no cluster:<id> label"),
                    "add the runner to exactly one cluster:<id> label",
                );
            }
        }
    }
    for (r, cl) in &runner_clusters {
        if cl.len() > 1 {
            ctx.error_help(
                codes::RUNNERS_INVENTORY,
                span_of(cl[1]),
                &join("labels", cl[1]),
                format!(
                    "runner '{r}' is in more than one cluster label: {}",
                    cl.join(", ")
                ),
                "keep the runner in exactly one cluster:<id> label",
            );
        }
    }
    // Partitions.
    for (id, k, rec) in clusters.iter() {
        let Some(slurm) = rec.get("slurm") else {
            continue;
        };
        let Some(parts) = slurm
            .get("partitions")
            .and_then(Node::as_seq)
            .filter(|p| !p.is_empty())
        else {
            continue;
        };
        let allowed: Vec<&str> = parts.iter().filter_map(Node::as_str).collect();
        if let Some(def) = slurm.get("partition").and_then(Node::as_str)
            && !allowed.contains(&def)
        {
            ctx.error(
                codes::RUNNERS_INVENTORY,
                slurm.get("partition").map(|n| n.span).unwrap_or(k.span),
                &join("clusters", id),
                format!("default partition '{def}' is not in slurm.partitions"),
            );
        }
        let label = format!("cluster:{id}");
        for r in inv.runners(&label).unwrap_or(&[]) {
            let plabels: Vec<&str> = inv
                .labels
                .iter()
                .filter(|(l, rs)| l.starts_with("partition:") && rs.contains(r))
                .map(|(l, _)| l.as_str())
                .collect();
            let ok = plabels.len() == 1
                && plabels[0]
                    .strip_prefix("partition:")
                    .is_some_and(|p| allowed.contains(&p));
            if !ok {
                ctx.error_help(
                    codes::RUNNERS_INVENTORY,
                    span_of(&label),
                    &join("labels", &label),
                    format!(
                        "runner '{r}' of cluster '{id}' needs exactly one partition:<name> label naming one of {} (found {})",
                        allowed.join(", "),
                        if plabels.is_empty() { "none".to_string() } else { plabels.join(", ") }
                    ),
                    "add the runner to one partition:<name> label",
                );
            }
        }
    }
}
