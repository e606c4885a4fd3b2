//! `node-count` of [Oct] multinode rows: `num-nodes` of an aggregated row, else the count a
//! checked-in schema-2 recipe declares, else the topology per side (docs/matrix.md, "Node
//! count").

use crate::inputs::Runners;
use crate::json::{Json, Object};
use crate::sweep_row::SweepRow;
use std::path::Path;

/// The node count of one multinode row.
pub(crate) fn node_count(
    row: &Object,
    num_nodes: Option<i64>,
    runners: &Runners<'_>,
) -> Result<i64, String> {
    let disagg = row.get("disagg").is_some_and(Json::truthy);
    match num_nodes {
        Some(n) if !disagg => return Ok(n),
        Some(_) => return Err("num-nodes is not valid for disaggregated entries".into()),
        None => {}
    }
    if let (Some(reference), Some(root)) = (row.srt_recipe(), runners.tree_root.as_deref())
        && let Some(n) = recipe_node_count(reference, root, runners.parsed)?
    {
        return Ok(n);
    }
    let runner = row.get_str("runner").unwrap_or_default();
    let side = |k: &str, role: &str| -> Result<i64, String> {
        match row.get(k).and_then(Json::as_object) {
            Some(w) => worker_node_count(w, role, runner, runners),
            None => Err(format!("multinode row without {k}")),
        }
    };
    Ok(side("prefill", "PREFILL")?.saturating_add(side("decode", "DECODE")?))
}

fn int(v: Option<&Json>, default: i64) -> Result<i64, String> {
    match v {
        None => Ok(default),
        Some(Json::Int(i)) => Ok(*i),
        Some(other) => Err(format!("expected an integer, found {}", other.to_python())),
    }
}

/// An explicit `<ROLE>_NODES=<n>` in `additional-settings`.
fn node_override(worker: &Object, name: &str) -> Result<Option<i64>, String> {
    let prefix = format!("{name}=");
    let mut values: Vec<i64> = Vec::new();
    for s in worker
        .get("additional-settings")
        .and_then(Json::as_list)
        .unwrap_or_default()
    {
        if let Some(rest) = s.as_str().and_then(|s| s.strip_prefix(&prefix))
            && !rest.is_empty()
            && rest.chars().all(|c| c.is_ascii_digit())
        {
            values.push(
                rest.parse()
                    .map_err(|_| format!("invalid {name} setting {rest}"))?,
            );
        }
    }
    let Some(&first) = values.first() else {
        return Ok(None);
    };
    if values.iter().any(|v| *v != first) || first <= 0 {
        let list = values
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        return Err(format!("Conflicting or invalid {name} settings: [{list}]"));
    }
    Ok(Some(first))
}

fn worker_node_count(
    worker: &Object,
    role: &str,
    runner: &str,
    runners: &Runners<'_>,
) -> Result<i64, String> {
    if let Some(n) = node_override(worker, &format!("{role}_NODES"))? {
        return Ok(n);
    }
    let label = match worker.get("hardware") {
        Some(Json::Str(h)) if !h.is_empty() => h.as_str(),
        _ => runner,
    };
    let gpn = runners.scheduling_gpus_per_node(label)?;
    let total = int(worker.get("num-worker"), 0)?
        .saturating_mul(int(worker.get("tp"), 0)?)
        .saturating_mul(int(worker.get("pp"), 1)?)
        .saturating_mul(int(worker.get("pcp-size"), 1)?);
    if gpn <= 0 {
        return Err(format!("gpus-per-node of '{label}' must be positive"));
    }
    Ok(total.saturating_add(gpn - 1).div_euclid(gpn))
}

/// `override` over `base`: mappings merge, `null` deletes, anything else replaces.
fn merge(base: &Object, over: &Object) -> Object {
    let mut out = base.clone();
    for (k, v) in over.iter() {
        match (v, out.get(k)) {
            (Json::Null, _) => {
                out.remove(k);
            }
            (Json::Object(o), Some(Json::Object(b))) => {
                let merged = merge(b, o);
                out.set(k, Json::Object(merged));
            }
            _ => out.set(k, v.clone()),
        }
    }
    out
}

/// The count a checked-in recipe declares, `None` when the file is not in the tree or the
/// selector gives no authoritative count (zip or none on a bundle, non-schema-2 bundle).
pub(crate) fn recipe_node_count(
    reference: &str,
    root: &Path,
    parsed: Option<&infx_yaml::DocIndex<'_>>,
) -> Result<Option<i64>, String> {
    let (file, selector) = reference.split_once(':').unwrap_or((reference, ""));
    let multi_root = infx_config::recipes_root(true);
    let rel = if file.starts_with(&format!("{multi_root}/")) {
        file.to_string()
    } else {
        infx_config::checkout_recipe_path(file).unwrap_or_else(|| format!("{multi_root}/{file}"))
    };
    let path = root.join(&rel);
    if !path.is_file() {
        return Ok(None);
    }
    let no_documents = infx_yaml::DocIndex::default();
    let doc = parsed
        .unwrap_or(&no_documents)
        .load(&path)
        .map_err(|d| d.message)?;
    let Json::Object(mut recipe) = Json::from_node(&doc.root)? else {
        return Err(format!("srt-slurm recipes must be a mapping: {rel}"));
    };
    if let Some(Json::Object(base)) = recipe.get("base").cloned() {
        let named = selector.starts_with("override_") && recipe.contains(selector);
        if !(selector == "base" || named) {
            return Ok(None);
        }
        let schema = recipe.get("schema").cloned();
        let over = match recipe.get(selector) {
            Some(Json::Object(o)) if selector != "base" => o.clone(),
            _ => Object::new(),
        };
        let mut merged = merge(&base, &over);
        if !merged.contains("schema")
            && let Some(s) = schema
        {
            merged.set("schema", s);
        }
        if merged.get("schema") != Some(&Json::Int(2)) {
            return Ok(None);
        }
        recipe = merged;
    }
    if recipe.get("schema") != Some(&Json::Int(2)) {
        return Err(format!("srt-slurm recipes must declare schema: 2: {rel}"));
    }
    let Some(roles) = recipe
        .get("roles")
        .and_then(Json::as_object)
        .filter(|r| !r.is_empty())
    else {
        return Err(format!("Recipe has no worker roles: {rel}"));
    };
    let mut workers = 0;
    for (name, role) in roles.iter() {
        match role.as_object().and_then(|r| r.get("nodes")) {
            None => return Err(format!("Recipe role '{name}' must specify nodes: {rel}")),
            Some(Json::Str(s)) if s == "colocate" => {}
            Some(n) => workers = int(Some(n), 0)?.saturating_add(workers),
        }
    }
    Ok(Some(workers.saturating_add(auxiliary_nodes(&recipe)?)))
}

fn placement_dedicated(o: Option<&Object>) -> bool {
    o.and_then(|o| o.get("placement"))
        .and_then(Json::as_object)
        .and_then(|p| p.get_str("node"))
        == Some("dedicated")
}

/// Service pools plus dedicated infra/frontend/client nodes (srtctl's placement policy).
fn auxiliary_nodes(recipe: &Object) -> Result<i64, String> {
    let services: Vec<&Object> = recipe
        .get("services")
        .and_then(Json::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(Json::as_object)
        .filter(|s| s.get("enabled").is_none_or(Json::truthy))
        .collect();
    let mut pool = 0;
    for s in &services {
        pool = match s.get("nodes") {
            None | Some(Json::Null) => 0,
            n => int(n, 0)?,
        }
        .saturating_add(pool);
    }
    let mut infra = recipe
        .get("infra")
        .and_then(Json::as_object)
        .and_then(|i| i.get("etcd_nats_dedicated_node"))
        .is_some_and(Json::truthy);
    let discovery: Vec<bool> = services
        .iter()
        .filter(|s| matches!(s.get_str("type"), Some("etcd" | "nats")))
        .map(|s| placement_dedicated(Some(s)))
        .collect();
    if let Some(&first) = discovery.first() {
        if discovery.iter().any(|d| *d != first) {
            return Err("Recipe etcd and nats must agree on dedicated placement".into());
        }
        infra = first;
    }
    let mut dedicated = i64::from(infra);
    for (section, legacy) in [
        ("frontend", "dedicated_node"),
        ("benchmark", "client_dedicated_node"),
    ] {
        let settings = recipe.get(section).and_then(Json::as_object);
        let on = placement_dedicated(settings)
            || settings
                .and_then(|s| s.get(legacy))
                .is_some_and(Json::truthy);
        dedicated += i64::from(on);
    }
    let colocate = recipe
        .get("benchmark")
        .and_then(Json::as_object)
        .and_then(|b| b.get("colocate_with_frontend"))
        .is_none_or(Json::truthy);
    if dedicated > 0 && colocate {
        dedicated = 1;
    }
    Ok(pool.saturating_add(dedicated))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(text: &str) -> Object {
        match infx_yaml::parse_str(Path::new("t.yaml"), text).map(|n| Json::from_node(&n)) {
            Ok(Ok(Json::Object(o))) => o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn auxiliary_nodes_follow_the_placement_policy() {
        assert_eq!(auxiliary_nodes(&obj("roles: {}\n")), Ok(0));
        // Dedicated frontend and client co-locate by default: one node.
        assert_eq!(
            auxiliary_nodes(&obj(
                "frontend: {placement: {node: dedicated}}\nbenchmark: {client_dedicated_node: true}\n"
            )),
            Ok(1)
        );
        assert_eq!(
            auxiliary_nodes(&obj(
                "frontend: {dedicated_node: true}\nbenchmark: {client_dedicated_node: true, colocate_with_frontend: false}\n"
            )),
            Ok(2)
        );
        assert_eq!(
            auxiliary_nodes(&obj(
                "services: [{type: etcd, placement: {node: dedicated}}, {type: nats}]\n"
            )),
            Err("Recipe etcd and nats must agree on dedicated placement".into())
        );
        assert_eq!(
            auxiliary_nodes(&obj(
                "services: [{type: pool, nodes: 2}, {type: x, nodes: 5, enabled: false}]\n"
            )),
            Ok(2)
        );
    }

    #[test]
    fn explicit_role_nodes_win_and_must_agree() {
        let w = obj("num-worker: 2\ntp: 8\nadditional-settings: [PREFILL_NODES=3, OTHER=1]\n");
        assert_eq!(node_override(&w, "PREFILL_NODES"), Ok(Some(3)));
        let bad = obj("additional-settings: [DECODE_NODES=1, DECODE_NODES=2]\n");
        assert_eq!(
            node_override(&bad, "DECODE_NODES"),
            Err("Conflicting or invalid DECODE_NODES settings: [1, 2]".into())
        );
    }

    #[test]
    fn overrides_merge_over_base_with_null_deleting() {
        let m = merge(
            &obj("a: 1\nb: {c: 2, d: 3}\n"),
            &obj("b: {c: null, e: 4}\nf: 5\n"),
        );
        assert_eq!(
            Json::Object(m).to_python(),
            r#"{"a": 1, "b": {"d": 3, "e": 4}, "f": 5}"#
        );
    }
}
