//! The worker roles of a variant as srtctl reads them: schema 2's `roles.*`, schema 1's
//! `resources` counts with the backend's per-mode config (docs/recipe.md, "Rendering").

use super::{Role, count, str_map, vllm_launch};
use crate::pystr::py_str;
use crate::schema2::engine_type;
use infx_yaml::{Node, Value};

/// The role's environment with the top-level `environment` applied over it.
fn with_top_env(
    mut env: Vec<(String, String)>,
    top_env: &[(String, String)],
) -> Vec<(String, String)> {
    for (k, val) in top_env {
        env.retain(|(ek, _)| ek != k);
        env.push((k.clone(), val.clone()));
    }
    env
}

/// Schema 2: the job's engine and its `prefill`, `decode`, `agg` roles.
pub(super) fn schema2<'a>(
    t: &'a Node,
    gpn: i64,
    top_env: &[(String, String)],
) -> (String, Vec<Role<'a>>) {
    let top_engine = t
        .get("engine")
        .filter(|e| !e.is_null())
        .and_then(engine_type);
    let engine = top_engine.unwrap_or_else(|| "sglang".into());
    let mut roles = Vec::new();
    for name in ["prefill", "decode", "agg"] {
        let Some(r) = t.get_path(&["roles", name]) else {
            continue;
        };
        let nodes = count(r.get("nodes"));
        let workers = count(r.get("workers")).unwrap_or(0);
        let gpus = count(r.get("gpus")).unwrap_or_else(|| match nodes {
            Some(n) if workers > 0 => n * gpn / workers,
            _ => gpn,
        });
        let role_engine = r
            .get("engine")
            .filter(|e| !e.is_null())
            .and_then(engine_type)
            .unwrap_or_else(|| engine.clone());
        roles.push(Role {
            name,
            workers,
            gpus,
            nodes,
            args: r.get("args").and_then(Node::as_map),
            env: with_top_env(str_map(r.get("env")), top_env),
            engine: role_engine,
            kv_events: r.get("kv_events").filter(|x| !x.is_null()),
            vllm_kv_events: r.get("kv_events").filter(|x| !x.is_null()),
        });
    }
    (engine, roles)
}

/// Schema 1: the backend's engine and one role per mode srtctl allocates.
pub(super) fn schema1<'a>(
    t: &'a Node,
    gpn: i64,
    top_env: &[(String, String)],
) -> (String, Vec<Role<'a>>) {
    let b = t.get("backend");
    let engine = b
        .and_then(|b| b.get("type"))
        .map(py_str)
        .unwrap_or_else(|| "sglang".into());
    let cfg_key = format!("{engine}_config");
    let res = t.get("resources");
    let disagg = res.is_some_and(|r| {
        r.get("prefill_nodes").is_some_and(|x| !x.is_null())
            || r.get("decode_nodes").is_some_and(|x| !x.is_null())
    });
    // A disaggregated job still places `agg_workers` after decode (srtctl allocates every
    // mode), on nodes `resources` does not count.
    let has_workers = |short: &str| {
        count(res.and_then(|r| r.get(&format!("{short}_workers")))).is_some_and(|w| w > 0)
    };
    let stray_agg = disagg && has_workers("agg");
    // The same for prefill/decode workers of an aggregated job: placed first.
    let stray_pd = !disagg && (has_workers("prefill") || has_workers("decode"));
    let modes: &[(&'static str, &str, &str)] = if stray_pd || stray_agg {
        &[
            ("prefill", "prefill", "prefill"),
            ("decode", "decode", "decode"),
            ("agg", "agg", "aggregated"),
        ]
    } else if disagg {
        &[
            ("prefill", "prefill", "prefill"),
            ("decode", "decode", "decode"),
        ]
    } else {
        &[("agg", "agg", "aggregated")]
    };
    let mut roles: Vec<Role> = Vec::new();
    for (name, short, mode) in modes {
        let nodes = count(res.and_then(|r| r.get(&format!("{short}_nodes"))));
        let workers = count(res.and_then(|r| r.get(&format!("{short}_workers")))).unwrap_or(0);
        let explicit = count(res.and_then(|r| r.get(&format!("gpus_per_{short}"))));
        // `decode_nodes: 0` shares the prefill nodes, each decode worker as wide as a prefill
        // one (docs/recipe.md, "Rendering").
        let prefill_gpus = roles
            .first()
            .filter(|r| r.name == "prefill")
            .map(|r| r.gpus);
        let gpus = explicit.unwrap_or(match nodes {
            Some(n) if n > 0 && workers > 0 => n * gpn / workers,
            Some(0) if *name == "decode" && workers > 0 => prefill_gpus.unwrap_or(gpn),
            _ => gpn,
        });
        let env = str_map(b.and_then(|b| b.get(&format!("{mode}_environment"))));
        roles.push(Role {
            name,
            workers,
            gpus,
            // srtctl counts `agg_nodes or 1`, but `prefill_nodes or 0` + `decode_nodes or 0`.
            nodes: if (disagg && *name == "agg") || (stray_pd && *name != "agg") {
                Some(0)
            } else {
                nodes.or(Some(i64::from(*name == "agg")))
            },
            args: b
                .and_then(|b| b.get_path(&[&cfg_key, mode]))
                .and_then(Node::as_map),
            env: with_top_env(env, top_env),
            engine: engine.clone(),
            // `kv_events_config: true` covers prefill and decode only; a mapping's mode entry
            // counts when it is `true` or a mapping of overrides (docs/recipe.md, "Rendering").
            kv_events: vllm_launch::schema1_kv_events(b, name)
                .filter(|k| matches!(k.value, Value::Bool(true) | Value::Map(_))),
            vllm_kv_events: vllm_launch::schema1_kv_events(b, name),
        });
    }
    (engine, roles)
}
