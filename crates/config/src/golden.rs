//! Agreement with upstream's validation goldens (`corpus/goldens/validation/<case>/`): each case
//! is a single-fault mutation of the August master files, rebuilt here IN MEMORY (the corpus is
//! never written), checked, and compared with upstream's verdict and the rule we expect for it.
//!
//! Used by `cargo xtask conformance validation` and by this crate's integration test.

use crate::{Dialect, from_documents, validate};
use infx_report::Diagnostic;
use infx_yaml::{Document, Float, Mapping, Node, Value};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// How one case compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Agree,
    /// We are deliberately stricter than upstream; counted as agreement with this reason.
    Explained(String),
    /// Upstream rejects it only while generating rows (the matrix step); not counted here.
    Deferred(String),
    Disagree(String),
}

#[derive(Debug, Clone)]
pub struct CaseResult {
    pub name: String,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Default)]
pub struct GoldenReport {
    pub cases: Vec<CaseResult>,
    /// Findings of the unmodified August tree (real, e.g. X5): excluded from every case's verdict.
    pub baseline: Vec<String>,
}

impl GoldenReport {
    /// Cases counted (deferred ones are not).
    pub fn total(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| !matches!(c.verdict, Verdict::Deferred(_)))
            .count()
    }
    pub fn agree(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| matches!(c.verdict, Verdict::Agree | Verdict::Explained(_)))
            .count()
    }
}

/// The rule each rejected case must be reported under (upstream names no rule codes; these are
/// read off its error messages, see docs/config.md). Several codes: any one of them.
const EXPECTED: &[(&str, &[&str])] = &[
    ("entry-unknown-field", &["unknown-key"]),
    ("entry-missing-image", &["missing-field"]),
    ("entry-missing-model", &["missing-field"]),
    ("entry-missing-model-prefix", &["missing-field"]),
    ("entry-missing-precision", &["missing-field"]),
    ("entry-missing-framework", &["missing-field"]),
    ("entry-missing-runner", &["missing-field"]),
    ("entry-missing-multinode", &["missing-field"]),
    ("entry-missing-scenarios", &["missing-field"]),
    ("entry-image-not-string", &["type"]),
    ("single-node-disagg-true", &["X1"]),
    ("single-node-top-level-kv-p2p-transfer", &["unknown-key"]),
    ("multinode-disagg-not-bool", &["type"]),
    // Upstream: 9 errors (prefill/decode missing on every row, tp not a multinode field).
    (
        "single-node-entry-flagged-multinode",
        &["missing-field", "unknown-key"],
    ),
    ("top-level-key-with-wildcard", &["L3"]),
    ("duplicate-key-across-master-files", &["L4"]),
    ("file-root-not-mapping", &["L1"]),
    ("scenarios-unknown-key", &["unknown-key"]),
    ("scenarios-empty-mapping", &["scenarios"]),
    ("scenarios-fixed-seq-len-empty-list", &["scenarios"]),
    ("fixed-seq-len-missing-isl", &["missing-field"]),
    ("fixed-seq-len-missing-search-space", &["missing-field"]),
    ("fixed-seq-len-unknown-field", &["unknown-key"]),
    ("agentic-duration-field", &["unknown-key"]),
    ("agentic-trace-source-field", &["unknown-key"]),
    ("conc-start-greater-than-conc-end", &["C4"]),
    ("conc-list-and-range-both", &["C2"]),
    ("conc-neither-list-nor-range", &["C3"]),
    ("conc-only-start", &["C3"]),
    ("conc-start-zero", &["C4"]),
    ("conc-start-negative", &["C4"]),
    ("conc-list-negative-value", &["C5"]),
    ("conc-list-zero-value", &["C5"]),
    ("conc-list-empty", &["C3"]),
    ("conc-list-non-integer", &["type"]),
    ("dcp-size-not-dividing-tp", &["T1"]),
    ("dcp-size-zero", &["value"]),
    ("pp-string-strict", &["type"]),
    ("pp-zero", &["value"]),
    ("pcp-size-negative", &["value"]),
    ("row-missing-tp", &["missing-field"]),
    ("spec-decoding-invalid-value", &["value"]),
    ("single-node-row-kv-p2p-transfer", &["unknown-key"]),
    ("dp-attn-not-bool", &["type"]),
    ("ep-not-integer", &["type"]),
    ("router-version-image-reference", &["component-version"]),
    ("router-missing-version", &["missing-field"]),
    ("router-empty-name", &["value"]),
    ("router-extra-field", &["unknown-key"]),
    ("router-top-level-and-row", &["M1"]),
    ("kv-p2p-transfer-top-level-and-row", &["M1"]),
    ("disagg-without-kv-p2p-transfer", &["M3"]),
    ("kv-p2p-transfer-empty-string", &["value"]),
    ("multinode-row-missing-decode", &["missing-field"]),
    ("worker-missing-num-worker", &["missing-field"]),
    ("worker-missing-ep", &["missing-field"]),
    ("worker-dcp-size-not-dividing-tp", &["T1"]),
    ("worker-hardware-only-prefill", &["H1"]),
    ("worker-hardware-empty-string", &["value"]),
    ("worker-unknown-field", &["unknown-key"]),
    ("multinode-row-tp-field", &["unknown-key"]),
    ("worker-additional-settings-not-list", &["type"]),
    ("agentic-non-cluster-runner", &["X2"]),
    ("kv-offloading-dram-without-backend", &["K1"]),
    ("kv-offload-backend-with-none", &["K1"]),
    ("kv-offload-backend-without-kv-offloading", &["K1"]),
    ("agentic-single-node-missing-kv-offloading", &["A2"]),
    ("kv-offloading-invalid-value", &["value"]),
    (
        "kv-offload-backend-version-image-reference",
        &["component-version"],
    ),
    ("kv-offload-backend-empty-name", &["value"]),
    ("dram-offload-without-dram-utilization", &["K2"]),
    ("dram-utilization-zero", &["value"]),
    ("dram-utilization-above-one", &["value"]),
    ("agentic-tp-and-prefill-decode", &["A1"]),
    ("agentic-multinode-only-prefill", &["A1"]),
    ("agentic-multinode-row-pp", &["A4"]),
    ("agentic-multinode-row-dcp-size", &["A4"]),
    ("agentic-single-node-dcp-not-dividing-tp", &["T1"]),
    ("agentic-worker-hardware-only-prefill", &["A5"]),
    ("agentic-disagg-without-kv-p2p-transfer", &["M3"]),
    ("agentic-single-node-row-kv-p2p-transfer", &["M2"]),
    ("agentic-row-gpus-per-node", &["unknown-key"]),
    ("agentic-row-total-cpu-dram-gb", &["unknown-key"]),
];

/// Accepted upstream, rejected by us on purpose: (case, our code, reason).
const STRICTER: &[(&str, &str, &str)] = &[
    (
        "accepted-unknown-runner-label",
        "X5",
        "upstream never checks that the runner is a label of runners.yaml (CONFIGS.md says it must be); \
         an unknown label silently drops the config from --runner-node-filter sweeps, so X5 rejects it",
    ),
    (
        "accepted-tp-as-string",
        "type",
        "upstream coerces tp '4' for validation but copies the string \"4\" into the generated rows \
         (stdout.json has \"tp\": \"4\"), so downstream sees a string; we require a native integer",
    ),
];

/// Runs every case under `validation_dir` against the August tree at `aug_root`.
pub fn run_validation_goldens(
    validation_dir: &Path,
    aug_root: &Path,
) -> Result<GoldenReport, String> {
    let files = crate::layout::MASTER_CONFIGS;
    let mut docs = Vec::new();
    for f in files {
        docs.push(infx_yaml::load_file(&aug_root.join(f)).map_err(|d| d.to_string())?);
    }
    let runners =
        infx_yaml::load_file(&aug_root.join(crate::layout::RUNNERS)).map_err(|d| d.to_string())?;
    let check = |masters: Vec<Document>| -> Vec<Diagnostic> {
        let mut l = from_documents(masters, Some(runners.clone()), aug_root.to_path_buf());
        l.dialect = Dialect::Aug;
        validate(&l)
            .diagnostics
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect()
    };
    let key_of = |d: &Diagnostic| (d.code, d.message.clone());
    let baseline: Vec<Diagnostic> = check(docs.clone());
    let base_keys: Vec<(infx_report::Code, String)> = baseline.iter().map(key_of).collect();

    let mut dirs: Vec<PathBuf> = std::fs::read_dir(validation_dir)
        .map_err(|e| format!("{}: {e}", validation_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("mutation.json").is_file())
        .collect();
    dirs.sort();

    let mut report = GoldenReport {
        baseline: baseline.iter().map(|d| d.to_string()).collect(),
        ..Default::default()
    };
    for dir in dirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let verdict = match run_case(&dir, &name, &files, &docs, &check, &base_keys, &key_of) {
            Ok(v) => v,
            Err(e) => Verdict::Disagree(format!("cannot rebuild: {e}")),
        };
        report.cases.push(CaseResult { name, verdict });
    }
    Ok(report)
}

type KeyFn<'a> = dyn Fn(&Diagnostic) -> (infx_report::Code, String) + 'a;

fn run_case(
    dir: &Path,
    name: &str,
    files: &[&str],
    docs: &[Document],
    check: &dyn Fn(Vec<Document>) -> Vec<Diagnostic>,
    base_keys: &[(infx_report::Code, String)],
    key_of: &KeyFn,
) -> Result<Verdict, String> {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).map_err(|e| format!("{f}: {e}"));
    let mutation: Json =
        serde_json::from_str(&read("mutation.json")?).map_err(|e| e.to_string())?;
    let exit: i32 = read("exit_code.txt")?
        .trim()
        .parse()
        .map_err(|e| format!("exit_code.txt: {e}"))?;
    let phase = mutation
        .get("expected_phase")
        .and_then(Json::as_str)
        .unwrap_or("");
    if phase.starts_with("row generation") {
        let msg = read("message.txt").unwrap_or_default();
        let first = msg.lines().next().unwrap_or("").to_string();
        return Ok(Verdict::Deferred(format!(
            "upstream rejects it only while generating rows (matrix step): {first}"
        )));
    }
    let target = mutation
        .get("mutated_file")
        .and_then(Json::as_str)
        .ok_or("mutation.json has no mutated_file")?;
    let fi = files
        .iter()
        .position(|f| *f == target)
        .ok_or_else(|| format!("unknown mutated_file {target}"))?;
    let mut masters = docs.to_vec();
    let ops = mutation
        .get("ops")
        .and_then(Json::as_array)
        .ok_or("mutation.json has no ops")?;
    for op in ops {
        apply_op(&mut masters, fi, files, op)?;
    }
    let diags = check(masters);
    let new: Vec<&Diagnostic> = diags
        .iter()
        .filter(|d| !base_keys.contains(&key_of(d)))
        .collect();
    let codes: Vec<&str> = new.iter().map(|d| d.code.rule()).collect();
    let summary = || {
        if new.is_empty() {
            "we accept it".to_string()
        } else {
            new.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(" | ")
        }
    };
    if exit == 0 {
        if new.is_empty() {
            return Ok(Verdict::Agree);
        }
        if let Some((_, code, why)) = STRICTER.iter().find(|(n, _, _)| *n == name)
            && codes.iter().all(|c| c == code)
        {
            return Ok(Verdict::Explained(format!(
                "we reject with config/{code}: {why}"
            )));
        }
        return Ok(Verdict::Disagree(format!(
            "upstream accepts; we reject: {}",
            summary()
        )));
    }
    let Some((_, want)) = EXPECTED.iter().find(|(n, _)| *n == name) else {
        return Ok(Verdict::Disagree(format!(
            "no expected rule recorded for this case; we report: {}",
            summary()
        )));
    };
    if new.is_empty() {
        return Ok(Verdict::Disagree(format!(
            "upstream rejects (expected config/{}); we accept",
            want.join("|")
        )));
    }
    if codes.iter().any(|c| want.contains(c)) {
        Ok(Verdict::Agree)
    } else {
        Ok(Verdict::Disagree(format!(
            "expected config/{}; we report: {}",
            want.join("|"),
            summary()
        )))
    }
}

/// Applies one op (`add` / `set` / `delete` / `wrap-root-in-list`) to `masters[fi]` in memory.
fn apply_op(masters: &mut [Document], fi: usize, files: &[&str], op: &Json) -> Result<(), String> {
    let kind = op
        .get("op")
        .and_then(Json::as_str)
        .ok_or("op without 'op'")?;
    if kind == "wrap-root-in-list" {
        let root = std::sync::Arc::make_mut(&mut masters[fi].root);
        let span = root.span;
        let inner = std::mem::replace(root, Node::new(Value::Null, span));
        *root = Node::new(Value::Seq(vec![inner]), span);
        return Ok(());
    }
    let path = op
        .get("path")
        .and_then(Json::as_array)
        .ok_or("op without path")?;
    let (last, parents) = path.split_last().ok_or("empty path")?;
    let new_value = match op.get("new") {
        Some(Json::Object(o)) if o.contains_key("copy_of") => {
            let c = &o["copy_of"];
            let file = c
                .get("file")
                .and_then(Json::as_str)
                .ok_or("copy_of without file")?;
            let src = files
                .iter()
                .position(|f| *f == file)
                .ok_or("copy_of: unknown file")?;
            let p = c
                .get("path")
                .and_then(Json::as_array)
                .ok_or("copy_of without path")?;
            Some(navigate(&mut Node::clone(&masters[src].root), p)?.clone())
        }
        Some(v) => Some(v.clone()).map(|v| json_to_node(&v, masters[fi].root.span)),
        None => None,
    };
    let parent = navigate(std::sync::Arc::make_mut(&mut masters[fi].root), parents)?;
    let span = parent.span;
    match (&mut parent.value, last) {
        (Value::Map(m), Json::String(k)) => {
            let exists = m.contains_key(k);
            match kind {
                "add" if exists => return Err(format!("add: key '{k}' already exists")),
                "set" | "delete" if !exists => {
                    return Err(format!("{kind}: key '{k}' does not exist"));
                }
                _ => {}
            }
            if kind == "delete" {
                m.shift_remove(k);
            } else {
                let mut v = new_value.ok_or("add/set without new")?;
                relocate(&mut v, span);
                m.insert(Node::new(Value::Str(k.clone()), span), v);
            }
        }
        (Value::Seq(items), Json::Number(n)) => {
            let i = n.as_u64().ok_or("bad index")? as usize;
            match kind {
                "set" => {
                    let slot = items.get_mut(i).ok_or("set: index out of range")?;
                    let mut v = new_value.ok_or("set without new")?;
                    relocate(&mut v, span);
                    *slot = v;
                }
                "delete" if i < items.len() => {
                    items.remove(i);
                }
                _ => return Err(format!("{kind} on a list index is not supported")),
            }
        }
        _ => return Err("path does not match the document".to_string()),
    }
    Ok(())
}

fn navigate<'n>(mut node: &'n mut Node, path: &[Json]) -> Result<&'n mut Node, String> {
    for p in path {
        node = match (&mut node.value, p) {
            (Value::Map(m), Json::String(k)) => {
                m.get_mut(k).ok_or_else(|| format!("no key '{k}'"))?
            }
            (Value::Seq(v), Json::Number(n)) => {
                let i = n.as_u64().unwrap_or(u64::MAX) as usize;
                v.get_mut(i).ok_or_else(|| format!("no index {i}"))?
            }
            _ => return Err(format!("cannot follow {p} here")),
        };
    }
    Ok(node)
}

/// Inserted nodes point at their parent, so findings in them still carry a real location.
fn relocate(n: &mut Node, span: infx_report::Span) {
    n.span = span;
}

fn json_to_node(v: &Json, span: infx_report::Span) -> Node {
    let value = match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(Float {
                value: n.as_f64().unwrap_or(f64::NAN),
                text: n.to_string().into_boxed_str(),
            }),
        },
        Json::String(s) => Value::Str(s.clone()),
        Json::Array(a) => Value::Seq(a.iter().map(|x| json_to_node(x, span)).collect()),
        Json::Object(o) => {
            let mut m = Mapping::new();
            for (k, x) in o {
                m.insert(
                    Node::new(Value::Str(k.clone()), span),
                    json_to_node(x, span),
                );
            }
            Value::Map(m)
        }
    };
    Node::new(value, span)
}
