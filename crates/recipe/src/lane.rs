//! Lanes and fragments: an InferenceX recipe is a fragment merged over its lane's shared block;
//! a fragment may not set the keys the launcher binds (docs/recipe.md, "Lanes and the bundled
//! recipe").

use crate::codes;
use crate::merge::{NullMode, merge_into};
use crate::pystr::{py_repr, py_str};
use crate::recipe::{RecipeFile, RecipeKind};
use crate::source::{Origin, Origins, Source, join_index, join_key};
use infx_report::Diagnostic;
use infx_yaml::{Node, Value};
use std::sync::Arc;

/// The four benchmark lanes. Each has a shared block in the lanes' folder
/// (`infx_config::layout::LANES_DIR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lane {
    FixedSeqSingle,
    FixedSeqMulti,
    AgenticSingle,
    AgenticMulti,
}

impl Lane {
    /// Picks the lane of a matrix point.
    pub fn of(agentic: bool, multinode: bool) -> Lane {
        match (agentic, multinode) {
            (false, false) => Lane::FixedSeqSingle,
            (false, true) => Lane::FixedSeqMulti,
            (true, false) => Lane::AgenticSingle,
            (true, true) => Lane::AgenticMulti,
        }
    }
    /// The shared block's path, relative to the benchmark tree (`inferencex-e2e/`), as the tree
    /// layout's owner spells it.
    pub fn block_path(self) -> &'static str {
        match self {
            Lane::FixedSeqSingle => infx_config::lane_block_path!("fixed-sequence-single"),
            Lane::FixedSeqMulti => infx_config::lane_block_path!("fixed-sequence-multi"),
            Lane::AgenticSingle => infx_config::lane_block_path!("agentic-single"),
            Lane::AgenticMulti => infx_config::lane_block_path!("agentic-multi"),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Lane::FixedSeqSingle => "fixed-sequence-single",
            Lane::FixedSeqMulti => "fixed-sequence-multi",
            Lane::AgenticSingle => "agentic-single",
            Lane::AgenticMulti => "agentic-multi",
        }
    }
    pub fn is_single_node(self) -> bool {
        matches!(self, Lane::FixedSeqSingle | Lane::AgenticSingle)
    }
    pub fn is_agentic(self) -> bool {
        matches!(self, Lane::AgenticSingle | Lane::AgenticMulti)
    }
    /// Whether the binder writes `key` of `benchmark.env` in this lane.
    pub fn binds_env_key(self, key: &str) -> bool {
        let (agentic, lane_only): (&[&str], &[&str]) = match self {
            Lane::FixedSeqSingle | Lane::FixedSeqMulti => (
                &[],
                &[
                    "MODEL",
                    "ISL",
                    "OSL",
                    "CONC",
                    "CONC_LIST",
                    "RANDOM_RANGE_RATIO",
                    "USE_CHAT_TEMPLATE",
                ],
            ),
            Lane::AgenticSingle => (AGENTIC_ENV_KEYS, &["MODEL"]),
            Lane::AgenticMulti => (AGENTIC_ENV_KEYS, &["AIPERF_DATASET_MMAP_CACHE_DIR"]),
        };
        agentic.contains(&key) || lane_only.contains(&key)
    }
}

/// `benchmark.env` keys the binder writes in both agentic lanes.
const AGENTIC_ENV_KEYS: &[&str] = &[
    "CONC",
    "CONC_LIST",
    "KV_OFFLOADING",
    "TOTAL_CPU_DRAM_GB",
    "RESULT_DIR",
    "AGENTIC_OUTPUT_DIR",
    "HF_HUB_CACHE",
    "HUGGINGFACE_HUB_CACHE",
];

/// Binder-owned keys in every lane.
pub(crate) const BINDER_OWNED: &[&[&str]] = &[
    &["model", "path"],
    &["model", "container"],
    &["model", "precision"],
    &["identity", "model", "repo"],
    &["identity", "container", "image"],
    &["benchmark", "concurrencies"],
    &["telemetry", "enabled"],
    &["telemetry", "dcgm_exporter", "port"],
];

/// Host-DRAM reference names (`'@dram.<name>'`).
pub(crate) const DRAM_NAMES: &[&str] = &["total-gb", "total-bytes", "per-gpu-gb", "per-gpu-bytes"];
const DRAM_KEYS: &[&str] = &[
    "cpu_bytes_to_use",
    "cpu_bytes_to_use_per_rank",
    "LMCACHE_MAX_LOCAL_CPU_SIZE",
    "l1-size-gb",
    "--l1-size-gb",
];

/// Composes a fragment with its lane's shared block: the fragment wins, mappings merge
/// recursively, anything else replaces, no null deletion. For a bundle the block goes under
/// `base` only; override blocks are untouched. Values from the block keep the block's file as
/// their origin.
pub fn compose_lane(fragment: &RecipeFile, lane: Lane, lane_block: &RecipeFile) -> RecipeFile {
    let mut sources: Vec<Source> = fragment.sources.as_ref().clone();
    let lane_src = sources.len();
    if let Some(src) = lane_block.sources.first() {
        sources.push(src.clone());
    }
    let lane_origin = Origin {
        source: lane_src,
        block: Arc::from(format!("lane:{}", lane.name())),
    };
    let mut root = Node::clone(&fragment.root);
    let mut origins = fragment.origins.clone();
    let (target, prefix) = match fragment.kind() {
        RecipeKind::Bundle => (root.as_map_mut().and_then(|m| m.get_mut("base")), "base"),
        _ => (Some(&mut root), ""),
    };
    if let Some(target) = target
        && target.as_map().is_some()
    {
        let mut composed = Node::clone(&lane_block.root);
        // The composed mapping stands where the fragment's base is; only the keys the lane
        // block contributes point into the lane file.
        composed.span = target.span;
        let frag_origin = fragment.origins.get(prefix).cloned().unwrap_or(Origin {
            source: 0,
            block: Arc::from(""),
        });
        let mut sub = Origins::new(frag_origin.clone());
        if let Some(m) = lane_block.root.as_map() {
            for k in m.keys() {
                sub.set(k, lane_origin.clone());
            }
        }
        merge_into(
            &mut composed,
            target,
            "",
            &mut sub,
            &frag_origin,
            NullMode::Replace,
        );
        *target = composed;
        origins.graft(prefix, &sub);
    }
    RecipeFile {
        sources: Arc::new(sources),
        root: Arc::new(root),
        origins,
    }
}

/// The fragment check: binder-owned keys and `'@dram.*'` references. Pure; one diagnostic
/// per offending key, located where it is written.
pub fn check_fragment(fragment: &RecipeFile, lane: Lane) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let path = fragment.path().to_path_buf();
    let blocks: Vec<(String, &Node)> = match fragment.kind() {
        RecipeKind::Bundle => fragment
            .root
            .as_map()
            .map(|m| {
                m.iter()
                    .filter(|(k, _, _)| *k != "schema")
                    .map(|(k, _, v)| (k.to_string(), v))
                    .collect()
            })
            .unwrap_or_default(),
        _ => vec![(String::new(), &fragment.root)],
    };
    let bundle = fragment.kind() == RecipeKind::Bundle;
    for (block, node) in blocks {
        let variant_block = bundle && block != "base";
        let shown = |rest: &str| {
            if block.is_empty() {
                rest.to_string()
            } else {
                join_key(&block, rest)
            }
        };
        for key in BINDER_OWNED {
            if let Some(v) = node.get_path(key) {
                let kp = shown(&key.join("."));
                out.push(owned_diag(&path, &kp, v));
            }
        }
        if let Some(env) = node.get_path(&["benchmark", "env"]).and_then(Node::as_map) {
            for (k, kn, v) in env.iter() {
                if !lane.binds_env_key(k) {
                    continue;
                }
                if variant_block && lane.is_single_node() && (k == "CONC" || k == "KV_OFFLOADING") {
                    continue; // a variant may name its point
                }
                let kp = shown(&format!("benchmark.env.{k}"));
                let mut d = owned_diag(&path, &kp, v);
                d.span = Some(kn.span);
                out.push(d);
            }
        }
        check_dram(node, &shown(""), &path, &mut out, None);
    }
    out
}

fn owned_diag(path: &std::path::Path, key_path: &str, v: &Node) -> Diagnostic {
    Diagnostic::error(
        codes::BINDER_OWNED,
        format!(
            "{}: remove {key_path} (= {}) from the fragment; the launcher binds it",
            path.display(),
            py_str(v)
        ),
    )
    .at(path, v.span)
    .with_help(format!(
        "delete {key_path}: the value comes from the matrix point at launch"
    ))
}

fn is_dram_ref(s: &str) -> bool {
    s.strip_prefix("@dram.")
        .is_some_and(|n| DRAM_NAMES.contains(&n))
}

fn dram_key(key: &str, parent: Option<&str>) -> bool {
    DRAM_KEYS.contains(&key)
        || (key == "max_local_cpu_size" && parent == Some("lmcache"))
        || key == "lmcache.max_local_cpu_size"
}

fn dram_diag(path: &std::path::Path, at: &Node, key_path: &str, value: &str) -> Diagnostic {
    Diagnostic::error(
        codes::DRAM_REF,
        format!("{key_path} = {value}: host-DRAM sizes must be a whole '@dram.<name>' reference"),
    )
    .at(path, at.span)
    .with_help(format!(
        "write '@dram.<name>' with <name> one of {}",
        DRAM_NAMES.join(", ")
    ))
}

/// One step on the way from the fragment's root to a node, for key paths built only when a
/// diagnostic needs one.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The key path of crumb `at` (`a.b[2].c`), below `prefix`.
fn key_path(prefix: &str, crumbs: &[(usize, Step<'_>)], mut at: usize) -> String {
    let mut steps = Vec::new();
    while at != usize::MAX {
        let (up, step) = &crumbs[at];
        steps.push(step);
        at = *up;
    }
    let mut p = prefix.to_string();
    for s in steps.into_iter().rev() {
        p = match s {
            Step::Key(k) => join_key(&p, k),
            Step::Index(i) => join_index(&p, *i),
        };
    }
    p
}

/// The `'@dram.*'` rule over every node below `root`. Iterative, with key paths kept as parent
/// links: a fragment nested a million levels deep costs memory linear in its size and no call
/// stack (docs/security.md).
fn check_dram(
    root: &Node,
    p: &str,
    path: &std::path::Path,
    out: &mut Vec<Diagnostic>,
    parent: Option<&str>,
) {
    // (node, crumb of the node (usize::MAX: the root), the key of its closest mapping)
    let mut crumbs: Vec<(usize, Step<'_>)> = Vec::new();
    let mut stack: Vec<(&Node, usize, Option<&str>)> = vec![(root, usize::MAX, parent)];
    while let Some((n, at, parent)) = stack.pop() {
        // Children are pushed in reverse, so diagnostics keep the document order.
        let mut children = Vec::new();
        match &n.value {
            Value::Map(m) => {
                for (k, _, v) in m.iter() {
                    crumbs.push((at, Step::Key(k)));
                    let here = crumbs.len() - 1;
                    if dram_key(k, parent) {
                        match v.as_str() {
                            Some(s) if is_dram_ref(s) => {}
                            _ => out.push(dram_diag(
                                path,
                                v,
                                &key_path(p, &crumbs, here),
                                &py_repr(v),
                            )),
                        }
                        continue;
                    }
                    children.push((v, here, Some(k)));
                }
            }
            Value::Seq(items) => {
                for (i, it) in items.iter().enumerate() {
                    crumbs.push((at, Step::Index(i)));
                    let here = crumbs.len() - 1;
                    let prev = i.checked_sub(1).and_then(|j| items[j].as_str());
                    if let Some(flag) = prev
                        && flag.starts_with("--")
                        && dram_key(flag, None) | dram_key(flag.trim_start_matches('-'), None)
                        && !it.as_str().is_some_and(is_dram_ref)
                    {
                        out.push(dram_diag(
                            path,
                            it,
                            &key_path(p, &crumbs, here),
                            &py_repr(it),
                        ));
                        continue;
                    }
                    children.push((it, here, parent));
                }
            }
            Value::Str(s) if s.trim_start().starts_with('{') => {
                // serde_json refuses nesting deeper than 128 levels: json_dram's recursion is
                // bounded.
                if let Ok(serde_json::Value::Object(obj)) =
                    serde_json::from_str::<serde_json::Value>(s)
                {
                    let mut bad = Vec::new();
                    json_dram(&obj, None, &mut bad);
                    let kp = key_path(p, &crumbs, at);
                    for (k, v) in bad {
                        out.push(dram_diag(path, n, &format!("{kp} (JSON key {k})"), &v));
                    }
                }
            }
            _ => {}
        }
        stack.extend(children.into_iter().rev());
    }
}

fn json_dram(
    obj: &serde_json::Map<String, serde_json::Value>,
    parent: Option<&str>,
    bad: &mut Vec<(String, String)>,
) {
    for (k, v) in obj {
        if dram_key(k, parent) {
            if !v.as_str().is_some_and(is_dram_ref) {
                bad.push((k.clone(), v.to_string()));
            }
        } else if let serde_json::Value::Object(o) = v {
            json_dram(o, Some(k), bad);
        }
    }
}

/// Binds the model of a point into a variant the way the launcher does (model part only;
/// docs/recipe.md, "Lanes and the bundled recipe"): `model` = existing model keys plus
/// `path: hf:<model>`, `container: <image>`, `precision`, placed right after `schema`/`name`;
/// `identity.model.repo` and `identity.container.image` (first `#` → `/`) when those
/// sub-mappings exist. Values written here have the origin block `binder`.
pub fn bind_model(v: &mut crate::recipe::Variant, model: &str, image: &str, precision: &str) {
    use infx_yaml::Mapping;
    let span = v.tree.span;
    let s = |x: &str| Node::new(Value::Str(x.to_string()), span);
    let Some(root) = Arc::make_mut(&mut v.tree).as_map_mut() else {
        return;
    };
    let mut model_map = root
        .get("model")
        .and_then(Node::as_map)
        .cloned()
        .unwrap_or_default();
    model_map.insert(s("path"), s(&format!("hf:{model}")));
    model_map.insert(s("container"), s(image));
    model_map.insert(s("precision"), s(precision));
    let mut out = Mapping::new();
    let mut placed = false;
    let entries: Vec<(Node, Node)> = root
        .iter_nodes()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, val) in entries {
        let key = py_str(&k);
        if key == "model" {
            continue;
        }
        if !placed && key != "schema" && key != "name" {
            out.insert(s("model"), Node::new(Value::Map(model_map.clone()), span));
            placed = true;
        }
        out.insert(k, val);
    }
    if !placed {
        out.insert(s("model"), Node::new(Value::Map(model_map), span));
    }
    if let Some(id) = out.get_mut("identity").and_then(Node::as_map_mut) {
        if let Some(m) = id.get_mut("model").and_then(Node::as_map_mut) {
            m.insert(s("repo"), s(model));
        }
        if let Some(c) = id.get_mut("container").and_then(Node::as_map_mut) {
            c.insert(s("image"), s(&image.replacen('#', "/", 1)));
        }
    }
    *root = out;
    let binder = Origin {
        source: 0,
        block: Arc::from("binder"),
    };
    v.origins.set("model", binder.clone());
    v.origins.set("identity.model.repo", binder.clone());
    v.origins.set("identity.container.image", binder);
}
