//! The schema-1 `srtctl dry-run` pipeline (c88ef731): dispatch on the document shape, expand,
//! apply cluster defaults, load each variant; the first failure stops the run.

use crate::codes;
use crate::pystr::py_str;
use crate::recipe::{RecipeFile, RecipeKind, Variant};
use crate::reference::Selector;
use crate::schema1::{self, Failure};
use infx_report::Diagnostic;
use infx_yaml::{Mapping, Node, Value};
use serde_json::Value as J;
use std::sync::Arc;

/// How a run stopped early.
#[derive(Debug, Clone)]
pub enum RunError {
    /// Loading, expansion or selector errors (`Error: <message>`).
    Diag(Diagnostic),
    /// A variant failed to load (`Error: [Invalid config in <file>: ]<message>`).
    Load {
        variant: Box<Variant>,
        failure: Failure,
        plain: bool,
    },
}

/// The result of one `dry-run` invocation.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Every variant that loaded, with its fully defaulted configuration, in run order.
    pub configs: Vec<(Variant, J)>,
    pub error: Option<RunError>,
}

/// Runs srtctl's dry-run validation over a loaded file.
pub fn dry_run(file: &RecipeFile, selector: Option<&Selector>, cluster: Option<&Node>) -> Run {
    let mut run = Run::default();
    let kind = file.kind();
    let variants = match kind {
        RecipeKind::Bundle => match file.expand(selector) {
            Ok(v) => v,
            Err(d) => {
                run.error = Some(RunError::Diag(d));
                return run;
            }
        },
        RecipeKind::Sweep => sweep_variants(file),
        RecipeKind::Plain => match file.expand(None) {
            Ok(v) => v,
            Err(d) => {
                run.error = Some(RunError::Diag(d));
                return run;
            }
        },
    };
    for mut v in variants {
        if kind == RecipeKind::Plain {
            // Plain path only: lock stripping and observability expansion; srtctl's override
            // path skips both (docs/recipe.md, "srtctl's file-level steps").
            if let Some((_, why)) = crate::recipe::lock_section_fault(&v.tree) {
                run.error = Some(RunError::Diag(Diagnostic::error(codes::TYPE, why)));
                return run;
            }
            crate::check::plain_steps(&mut v.tree, false);
        }
        if let Some(c) = cluster {
            apply_cluster(Arc::make_mut(&mut v.tree), c);
        }
        match schema1::load(&v.tree) {
            Ok(cfg) => run.configs.push((v, cfg)),
            Err(failure) => {
                run.error = Some(RunError::Load {
                    variant: Box::new(v),
                    failure,
                    plain: kind == RecipeKind::Plain,
                });
                return run;
            }
        }
    }
    run
}

/// File-level sweep: Cartesian product over every key of `sweep:`, strings templated
/// (docs/recipe.md, "File-level sweeps").
pub fn sweep_variants(file: &RecipeFile) -> Vec<Variant> {
    let Some(sweep) = file.root.get("sweep") else {
        return vec![];
    };
    let dims: Vec<(String, Vec<Node>)> = match &sweep.value {
        Value::Map(m) => m
            .iter_nodes()
            .map(|(k, v)| (py_str(k), iter_values(v)))
            .collect(),
        _ => vec![],
    };
    let mut base = Node::clone(&file.root);
    if let Some(m) = base.as_map_mut() {
        m.shift_remove("sweep");
    }
    let name = base
        .get("name")
        .map(py_str)
        .unwrap_or_else(|| "None".into());
    let mut combos: Vec<Vec<&Node>> = vec![vec![]];
    for (_, vals) in &dims {
        let mut next = Vec::new();
        for c in &combos {
            for v in vals {
                let mut c2 = c.clone();
                c2.push(v);
                next.push(c2);
            }
        }
        combos = next;
    }
    combos
        .into_iter()
        .map(|combo| {
            let params: Vec<(&str, &Node)> =
                dims.iter().map(|(k, _)| k.as_str()).zip(combo).collect();
            let mut tree = base.clone();
            template(&mut tree, &params);
            let suffix: Vec<String> = params
                .iter()
                .map(|(k, v)| format!("{k}{}", py_str(v)))
                .collect();
            let vname = format!("{name}_{}", suffix.join("_"));
            if let Some(m) = tree.as_map_mut() {
                m.insert(
                    Node::new(Value::Str("name".into()), file.root.span),
                    Node::new(Value::Str(vname.clone()), file.root.span),
                );
            }
            Variant {
                name: Some(vname),
                label: String::new(),
                selector: None,
                tree: Arc::new(tree),
                origins: file.origins.clone(),
                sources: file.sources.clone(),
            }
        })
        .collect()
}

/// What Python iterates when it iterates a value (`for v in x`).
fn iter_values(v: &Node) -> Vec<Node> {
    match &v.value {
        Value::Seq(items) => items.clone(),
        Value::Str(s) => s
            .chars()
            .map(|c| Node::new(Value::Str(c.to_string()), v.span))
            .collect(),
        Value::Map(m) => m.iter_nodes().map(|(k, _)| k.clone()).collect(),
        _ => vec![],
    }
}

fn template(n: &mut Node, params: &[(&str, &Node)]) {
    match &mut n.value {
        Value::Str(s) => {
            for (k, v) in params {
                let ph = format!("{{{k}}}");
                if *s == ph {
                    if matches!(v.value, Value::Seq(_)) {
                        *n = (*v).clone();
                        return;
                    }
                    *s = py_str(v);
                    return;
                }
                if s.contains(&ph) {
                    let rep = match &v.value {
                        Value::Seq(items) => items.iter().map(py_str).collect::<Vec<_>>().join(","),
                        _ => py_str(v),
                    };
                    *s = s.replace(&ph, &rep);
                }
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|i| template(i, params)),
        Value::Map(m) => {
            let keys: Vec<String> = m.keys().map(str::to_string).collect();
            for k in keys {
                if let Some(v) = m.get_mut(&k) {
                    template(v, params);
                }
            }
        }
        _ => {}
    }
}

/// Applies cluster defaults from an `srtslurm.yaml` tree (docs/recipe.md, "Cluster defaults").
pub fn apply_cluster(tree: &mut Node, cluster: &Node) {
    let span = tree.span;
    let s = |x: &str| Node::new(Value::Str(x.into()), span);
    let Some(root) = tree.as_map_mut() else {
        return;
    };
    let defaults = [
        ("account", "default_account"),
        ("partition", "default_partition"),
        ("time_limit", "default_time_limit"),
    ];
    for (key, ckey) in defaults {
        if let Some(v) = cluster.get(ckey).filter(|v| crate::recipe::is_truthy(v)) {
            if root.get("slurm").is_none_or(|x| x.as_map().is_none()) {
                root.insert(s("slurm"), Node::new(Value::Map(Mapping::new()), span));
            }
            if let Some(sl) = root.get_mut("slurm").and_then(Node::as_map_mut)
                && !sl.contains_key(key)
            {
                sl.insert(s(key), v.clone());
            }
        }
    }
    if let Some(dd) = cluster
        .get("default_sbatch_directives")
        .and_then(Node::as_map)
    {
        if root
            .get("sbatch_directives")
            .is_none_or(|x| x.as_map().is_none())
        {
            root.insert(
                s("sbatch_directives"),
                Node::new(Value::Map(Mapping::new()), span),
            );
        }
        if let Some(sd) = root.get_mut("sbatch_directives").and_then(Node::as_map_mut) {
            for (k, kn, v) in dd.iter() {
                if !sd.contains_key(k) {
                    sd.insert(kn.clone(), v.clone());
                }
            }
        }
    }
    if let Some(r) = root.get_mut("resources").and_then(Node::as_map_mut)
        && r.get("het_jobs").is_none_or(Node::is_null)
    {
        // `use_het_jobs` defaults to false in the cluster schema.
        let h = cluster
            .get("use_het_jobs")
            .cloned()
            .unwrap_or(Node::new(Value::Bool(false), span));
        r.insert(s("het_jobs"), h);
    }
    let alias = |v: &mut Node, table: &str| {
        if let Some(t) = cluster.get(table)
            && let Some(key) = v.as_str()
            && let Some(hit) = t.get(key)
        {
            *v = hit.clone();
        }
    };
    if let Some(m) = root.get_mut("model").and_then(Node::as_map_mut) {
        if let Some(p) = m.get_mut("path") {
            alias(p, "model_paths");
        }
        if let Some(c) = m.get_mut("container") {
            alias(c, "containers");
        }
    }
    for path in [
        &["frontend", "nginx_container"][..],
        &["benchmark", "container_image"],
        &[
            "observability",
            "tachometer",
            "dcgm_exporter",
            "container_image",
        ],
        &[
            "observability",
            "tachometer",
            "node_exporter",
            "container_image",
        ],
        &["telemetry", "dcgm_exporter", "container_image"],
    ] {
        let mut cur: Option<&mut Mapping> = Some(&mut *root);
        for (i, seg) in path.iter().enumerate() {
            let Some(m) = cur.take() else { break };
            if i + 1 == path.len() {
                if let Some(v) = m.get_mut(seg) {
                    alias(v, "containers");
                }
            } else {
                cur = m.get_mut(seg).and_then(Node::as_map_mut);
            }
        }
    }
    if !root.contains_key("reporting")
        && let Some(r) = cluster.get("reporting")
    {
        root.insert(s("reporting"), r.clone());
    }
    if !root.contains_key("health_check")
        && let Some(h) = cluster.get("default_health_check")
    {
        root.insert(s("health_check"), h.clone());
    }
    if let Some(v) = cluster.get("nginx_raise_ulimit").filter(|v| !v.is_null()) {
        if !root.contains_key("frontend") {
            root.insert(s("frontend"), Node::new(Value::Map(Mapping::new()), span));
        }
        if let Some(fe) = root.get_mut("frontend").and_then(Node::as_map_mut)
            && !fe.contains_key("nginx_raise_ulimit")
        {
            fe.insert(s("nginx_raise_ulimit"), v.clone());
        }
    }
}
