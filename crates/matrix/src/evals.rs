//! Eval selection after expansion, as the [Aug] generator does it: default marking,
//! `--evals-only` (the picks, agentic included) and `--all-evals` (docs/matrix.md, "Eval
//! selection").

use crate::generate::EvalMode;
use crate::json::{Json, Object};
use crate::sweep_row::SweepRow;
use std::collections::HashMap;

pub(crate) const MIN_EVAL_CONC: i64 = 16;
const EIGHT_K_ONE_K: (i64, i64) = (8192, 1024);

/// Applies the eval policy and, for `Subset`/`All`, keeps only eval rows marked `eval-only`.
pub fn select(rows: Vec<Object>, mode: EvalMode) -> Vec<Object> {
    match mode {
        EvalMode::None => rows,
        EvalMode::Default => mark_eval_entries(rows, false),
        EvalMode::Subset => only_evals(mark_eval_entries(rows, true)),
        EvalMode::All => only_evals(mark_all_eval_entries(mark_eval_entries(rows, true))),
    }
}

fn only_evals(rows: Vec<Object>) -> Vec<Object> {
    rows.into_iter()
        .filter(|r| r.get("run-eval").is_some_and(Json::truthy))
        .map(|mut r| {
            r.put("eval-only", Json::Bool(true));
            r.remove("require-power");
            r
        })
        .collect()
}

fn conc_values(row: &Object) -> Vec<i64> {
    match row.get("conc") {
        Some(Json::List(l)) => l.iter().filter_map(Json::as_i64).collect(),
        Some(Json::Int(i)) => vec![*i],
        _ => Vec::new(),
    }
}

fn eligible(row: &Object) -> Vec<i64> {
    let mut v: Vec<i64> = conc_values(row)
        .into_iter()
        .filter(|c| *c >= MIN_EVAL_CONC)
        .collect();
    v.sort_unstable();
    v
}

fn is_8k1k(row: &Object) -> bool {
    (row.get_i64("isl"), row.get_i64("osl")) == (Some(EIGHT_K_ONE_K.0), Some(EIGHT_K_ONE_K.1))
}

/// Canonical text of a JSON value, for grouping by structural equality.
fn canon(v: Option<&Json>) -> String {
    v.map_or_else(|| "\u{0}absent".to_string(), Json::to_python_compact_sorted)
}

/// Identity of a multinode row apart from concurrency and eval fields.
fn parallelism_key(row: &Object) -> String {
    const IGNORED: [&str; 8] = [
        "conc",
        "run-eval",
        "eval-only",
        "eval-conc",
        "eval-all-concs",
        "exp-name",
        "eval-framework",
        "eval-suite",
    ];
    let kept: Object = row
        .iter()
        .filter(|(k, _)| !IGNORED.contains(k))
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    Json::Object(kept).to_python_compact_sorted()
}

/// Groups in first-seen order, like a Python `defaultdict(list)`.
struct Groups<T> {
    index: HashMap<String, usize>,
    groups: Vec<Vec<T>>,
}

impl<T> Groups<T> {
    fn new() -> Self {
        Groups {
            index: HashMap::new(),
            groups: Vec::new(),
        }
    }
    fn push(&mut self, key: String, item: T) {
        let i = *self.index.entry(key).or_insert_with(|| {
            self.groups.push(Vec::new());
            self.groups.len() - 1
        });
        self.groups[i].push(item);
    }
}

/// First maximal element, as Python's `max(key=…)` returns it.
fn first_max(items: &[(usize, i64)]) -> Option<(usize, i64)> {
    let mut best: Option<(usize, i64)> = None;
    for &(i, c) in items {
        if best.is_none_or(|(_, b)| c > b) {
            best = Some((i, c));
        }
    }
    best
}

/// Default marking. `agentic` adds the agentic picks the eval flags enable.
pub(crate) fn mark_eval_entries(mut rows: Vec<Object>, agentic: bool) -> Vec<Object> {
    let mut marked = vec![false; rows.len()];
    let mut eval_conc: HashMap<usize, i64> = HashMap::new();

    // Single-node fixed 8k1k: highest and median distinct eligible conc per group.
    let mut sn: Groups<(usize, i64)> = Groups::new();
    for (i, r) in rows.iter().enumerate() {
        if !r.contains("tp") || !is_8k1k(r) || eligible(r).is_empty() {
            continue;
        }
        let key = [
            "model",
            "runner",
            "framework",
            "precision",
            "isl",
            "osl",
            "spec-decoding",
            "dp-attn",
        ]
        .iter()
        .map(|k| canon(r.get(k)))
        .collect::<Vec<_>>()
        .join("\u{1}");
        sn.push(key, (i, r.conc().unwrap_or(0)));
    }
    for g in &sn.groups {
        let mut concs: Vec<i64> = g.iter().map(|(_, c)| *c).collect();
        concs.sort_unstable();
        concs.dedup();
        let (Some(&top), Some(&median)) = (concs.last(), concs.get(concs.len() / 2)) else {
            continue;
        };
        for (i, c) in g {
            if *c == top || *c == median {
                marked[*i] = true;
            }
        }
    }

    // Multinode fixed 8k1k: per parallelism, the row with the largest eligible conc.
    let mut mn: Groups<(usize, i64)> = Groups::new();
    for (i, r) in rows.iter().enumerate() {
        if r.contains("tp") || !r.is_multinode() || !is_8k1k(r) {
            continue;
        }
        if let Some(&top) = eligible(r).last() {
            mn.push(parallelism_key(r), (i, top));
        }
    }
    for g in &mn.groups {
        if let Some((i, c)) = first_max(g) {
            marked[i] = true;
            eval_conc.insert(i, c);
        }
    }

    if agentic {
        let mut ag_sn: Groups<(usize, i64)> = Groups::new();
        let mut ag_mn: Groups<(usize, i64)> = Groups::new();
        for (i, r) in rows.iter().enumerate() {
            if !r.is_agentic() {
                continue;
            }
            if r.is_multinode() {
                if let Some(&top) = eligible(r).last() {
                    ag_mn.push(parallelism_key(r), (i, top));
                }
                continue;
            }
            let top = conc_values(r).into_iter().max().unwrap_or(0);
            let key = ["model", "runner", "framework", "precision"]
                .iter()
                .map(|k| canon(r.get(k)))
                .collect::<Vec<_>>()
                .join("\u{1}");
            ag_sn.push(key, (i, top));
        }
        for g in &ag_sn.groups {
            if let Some((i, _)) = first_max(g) {
                marked[i] = true;
            }
        }
        for g in &ag_mn.groups {
            if let Some((i, c)) = first_max(g) {
                marked[i] = true;
                eval_conc.insert(i, c);
            }
        }
    }

    for (i, r) in rows.iter_mut().enumerate() {
        r.put("run-eval", Json::Bool(marked[i]));
        if let Some(c) = eval_conc.get(&i) {
            r.put("eval-conc", Json::Int(*c));
        }
    }
    rows
}

fn sorted_unique(mut v: Vec<i64>) -> Vec<i64> {
    v.sort_unstable();
    v.dedup();
    v
}

fn int_list(v: &[i64]) -> Json {
    Json::List(v.iter().map(|c| Json::Int(*c)).collect())
}

/// Folds `concs` into `kept`, the row already kept for the same parallelism: its `conc` becomes
/// the sorted union, which is returned.
fn fold_concs(kept: &mut Object, concs: Vec<i64>) -> Vec<i64> {
    let mut merged = conc_values(kept);
    merged.extend(concs);
    let merged = sorted_unique(merged);
    kept.put("conc", int_list(&merged));
    merged
}

/// `--all-evals`: widens the picks to every eligible row, merging multinode rows of one
/// parallelism (docs/matrix.md, "Eval selection").
pub(crate) fn mark_all_eval_entries(rows: Vec<Object>) -> Vec<Object> {
    let mut out: Vec<Object> = Vec::with_capacity(rows.len());
    let mut mn_fixed: HashMap<String, usize> = HashMap::new();
    let mut mn_agentic: HashMap<String, usize> = HashMap::new();
    for mut r in rows {
        if r.is_eval_only() {
            continue;
        }
        if r.is_agentic() {
            if !r.is_multinode() {
                r.put("run-eval", Json::Bool(true));
                out.push(r);
                continue;
            }
            let concs = conc_values(&r);
            let key = parallelism_key(&r);
            if let Some(&at) = mn_agentic.get(&key) {
                let merged = fold_concs(&mut out[at], concs);
                let top = merged.last().copied().unwrap_or(0);
                out[at].put("eval-conc", Json::Int(top));
                continue;
            }
            let unique = sorted_unique(concs.clone());
            r.put("conc", int_list(&unique));
            r.put("run-eval", Json::Bool(true));
            r.set(
                "eval-conc",
                Json::Int(concs.iter().copied().max().unwrap_or(0)),
            );
            mn_agentic.insert(key, out.len());
            out.push(r);
            continue;
        }
        if !is_8k1k(&r) {
            out.push(r);
            continue;
        }
        if r.is_multinode() {
            let concs = conc_values(&r);
            let key = parallelism_key(&r);
            if let Some(&at) = mn_fixed.get(&key) {
                fold_concs(&mut out[at], concs);
                continue;
            }
            r.put("conc", int_list(&sorted_unique(concs)));
            r.put("run-eval", Json::Bool(true));
            r.put("eval-all-concs", Json::Bool(true));
            r.remove("eval-conc");
            mn_fixed.insert(key, out.len());
            out.push(r);
            continue;
        }
        r.put("run-eval", Json::Bool(true));
        out.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sn(conc: i64, tp: i64) -> Object {
        let mut o = Object::new();
        for (k, v) in [
            ("model", "m"),
            ("runner", "r"),
            ("framework", "f"),
            ("precision", "p"),
        ] {
            o.set(k, Json::str(v));
        }
        o.put("isl", Json::Int(8192));
        o.put("osl", Json::Int(1024));
        o.put("tp", Json::Int(tp));
        o.put("conc", Json::Int(conc));
        o.put("spec-decoding", Json::str("none"));
        o.put("dp-attn", Json::Bool(false));
        o.put("run-eval", Json::Bool(false));
        o
    }

    #[test]
    fn highest_and_median_distinct_conc_are_marked() {
        let rows: Vec<Object> = [4, 16, 32, 64, 128].iter().map(|c| sn(*c, 8)).collect();
        let marked = mark_eval_entries(rows, false);
        let picks: Vec<i64> = marked
            .iter()
            .filter(|r| r.get("run-eval") == Some(&Json::Bool(true)))
            .filter_map(|r| r.conc())
            .collect();
        // eligible {16, 32, 64, 128}: median = element 2 = 64, highest 128.
        assert_eq!(picks, [64, 128]);
    }

    #[test]
    fn low_concurrency_and_other_seq_lens_are_never_marked() {
        let mut one_k = sn(64, 8);
        one_k.put("isl", Json::Int(1024));
        let rows = vec![sn(4, 8), sn(8, 8), one_k];
        let marked = mark_eval_entries(rows, false);
        assert!(
            marked
                .iter()
                .all(|r| r.get("run-eval") == Some(&Json::Bool(false)))
        );
    }
}

/// [Oct] `test-config --exp-names`: keep rows whose exp-name is one of `names`. Duplicate names,
/// a name matching no row and a name matching several rows are errors (upstream reports them as
/// usage errors).
pub fn filter_exp_names(rows: Vec<Object>, names: &[String]) -> Result<Vec<Object>, String> {
    let mut unique: Vec<&str> = names.iter().map(String::as_str).collect();
    unique.sort_unstable();
    unique.dedup();
    if unique.len() != names.len() {
        return Err("--exp-names contains duplicate values".into());
    }
    let count = |n: &str| rows.iter().filter(|r| r.exp_name() == Some(n)).count();
    let missing: Vec<&str> = unique.iter().copied().filter(|n| count(n) == 0).collect();
    if !missing.is_empty() {
        return Err(format!(
            "Experiment name(s) not found: {}",
            missing.join(", ")
        ));
    }
    let ambiguous: Vec<&str> = unique.iter().copied().filter(|n| count(n) > 1).collect();
    if !ambiguous.is_empty() {
        return Err(format!(
            "Experiment name(s) matched multiple rows: {}",
            ambiguous.join(", ")
        ));
    }
    Ok(rows
        .into_iter()
        .filter(|r| r.exp_name().is_some_and(|e| unique.contains(&e)))
        .collect())
}

#[cfg(test)]
mod exp_name_tests {
    use super::*;

    fn named(n: &str) -> Object {
        let mut o = Object::new();
        o.put("exp-name", Json::str(n));
        o
    }

    #[test]
    fn exp_names_must_be_unique_existing_and_unambiguous() {
        let rows = vec![named("a"), named("b"), named("b")];
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            filter_exp_names(rows.clone(), &s(&["a"])).map(|r| r.len()),
            Ok(1)
        );
        assert_eq!(
            filter_exp_names(rows.clone(), &s(&["a", "a"]))
                .err()
                .as_deref(),
            Some("--exp-names contains duplicate values")
        );
        assert_eq!(
            filter_exp_names(rows.clone(), &s(&["z", "a"]))
                .err()
                .as_deref(),
            Some("Experiment name(s) not found: z")
        );
        assert_eq!(
            filter_exp_names(rows, &s(&["b"])).err().as_deref(),
            Some("Experiment name(s) matched multiple rows: b")
        );
    }
}
