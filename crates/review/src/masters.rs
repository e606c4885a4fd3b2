//! A light read of master-config entries: what the review checks need (image, framework, runner,
//! model prefix, scenarios, referenced recipes). The schema rules live in `infx-config`.

use crate::recipe::walk_strings;
use infx_config::legacy_recipe_path;
use infx_yaml::{Document, Node};
use std::collections::BTreeMap;

/// A master-config entry as review reads it: infx-config's view of the entry as written
/// (review also inspects entries the schema rules reject).
pub(crate) type Entry<'a> = infx_config::EntryView<'a>;

/// Tree-relative recipe paths an entry references (`CONFIG_FILE=`, `EVAL_CONFIG_FILE=`,
/// `srt-recipe:`, `eval-srt-recipe:`), selectors stripped, de-duplicated.
pub(crate) fn recipe_refs(e: &Entry<'_>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |p: String| {
        if !out.contains(&p) {
            out.push(p)
        }
    };
    walk_strings(e.node, &mut |s, _| {
        for prefix in ["CONFIG_FILE=", "EVAL_CONFIG_FILE="] {
            if let Some(v) = s.strip_prefix(prefix) {
                add(legacy_recipe_path(v));
            }
        }
    });
    for r in e.srt_references() {
        add(e.recipe_path(r.file));
    }
    out
}

/// Every entry of the master configs whose value is a mapping, in file order.
pub(crate) fn entries(masters: &[Document]) -> Vec<Entry<'_>> {
    masters
        .iter()
        .flat_map(infx_config::entries_in)
        .filter(|e| e.node.as_map().is_some())
        .collect()
}

/// One row's use of a recipe: the scenario and the legacy synthetic-acceptance settings of the
/// same `additional-settings` list ([Aug] injector: `SYNTHETIC_ACCEPTANCE=true`,
/// `SYNTHETIC_ACCEPTANCE_LENGTH=<AL>`).
#[derive(Clone, Debug)]
pub struct Usage {
    pub key: String,
    pub master: std::path::PathBuf,
    pub selector: Option<String>,
    pub agentic: bool,
    pub synthetic: bool,
    /// The `SYNTHETIC_ACCEPTANCE_LENGTH` value text and the node that sets it.
    pub length: Option<(String, infx_report::Span)>,
}

/// What the master configs say about a recipe file.
#[derive(Clone, Debug, Default)]
pub struct Binding {
    pub keys: Vec<String>,
    pub model_prefix: Option<String>,
    pub agentic: bool,
    pub frameworks: Vec<String>,
    pub usages: Vec<Usage>,
}

fn settings_usages(e: &Entry<'_>, agentic: bool, list: &[Node], out: &mut Vec<(String, Usage)>) {
    let strs: Vec<(&str, &Node)> = list.iter().filter_map(|n| Some((n.as_str()?, n))).collect();
    let synthetic = strs
        .iter()
        .any(|(s, _)| s.trim() == "SYNTHETIC_ACCEPTANCE=true");
    let length = strs.iter().find_map(|(s, n)| {
        s.strip_prefix("SYNTHETIC_ACCEPTANCE_LENGTH=")
            .map(|v| (v.trim().to_string(), n.span))
    });
    for (s, _) in &strs {
        let Some(v) = s.strip_prefix("CONFIG_FILE=") else {
            continue;
        };
        let selector = v
            .rsplit_once(':')
            .map(|(_, sel)| sel.to_string())
            .filter(|sel| infx_config::is_selector(sel));
        out.push((
            legacy_recipe_path(v),
            Usage {
                key: e.key.to_string(),
                master: e.doc.path.clone(),
                selector,
                agentic,
                synthetic,
                length: length.clone(),
            },
        ));
    }
}

/// Every row-level benchmark use of a recipe by an entry (scenario-aware; eval-only references
/// excluded).
pub(crate) fn usages(e: &Entry<'_>) -> Vec<(String, Usage)> {
    let mut out = Vec::new();
    for (name, blocks) in e.scenarios() {
        let agentic = infx_config::is_agentic_scenario(name);
        // Settings sit on a row or inside its prefill/decode workers: any depth.
        crate::recipe::walk(blocks, &mut |k, _, v| {
            if k == "additional-settings"
                && let Some(list) = v.as_seq()
            {
                settings_usages(e, agentic, list, &mut out);
            }
        });
    }
    // Eval-only references are not benchmark points (they measure real acceptance).
    for r in e.srt_references().filter(|r| !r.is_eval()) {
        out.push((
            e.recipe_path(r.file),
            Usage {
                key: e.key.to_string(),
                master: e.doc.path.clone(),
                selector: r.selector.map(str::to_string),
                agentic: r.is_agentic(),
                synthetic: false,
                length: None,
            },
        ));
    }
    out
}

/// Recipe path → the entries that reference it.
pub(crate) fn bindings(entries: &[Entry<'_>]) -> BTreeMap<String, Binding> {
    let mut out: BTreeMap<String, Binding> = BTreeMap::new();
    for e in entries {
        for r in recipe_refs(e) {
            let b = out.entry(r).or_default();
            b.keys.push(e.key.to_string());
            if b.model_prefix.is_none() {
                b.model_prefix = e.model_prefix().map(str::to_string);
            }
            if let Some(f) = e.framework() {
                b.frameworks.push(f.to_string());
            }
        }
        let us = usages(e);
        for r in recipe_refs(e) {
            // Rows say which scenario uses the recipe; without rows, the entry's scenarios.
            let mine: Vec<&Usage> = us.iter().filter(|(p, _)| *p == r).map(|(_, u)| u).collect();
            let b = out.entry(r).or_default();
            b.agentic |= if mine.is_empty() {
                e.is_agentic()
            } else {
                mine.iter().any(|u| u.agentic)
            };
        }
        for (path, u) in us {
            out.entry(path).or_default().usages.push(u);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entry's recipe folder follows infx-config's reading: a truthy `multinode` selects the
    /// multinode recipes root (docs/config.md, "Recipe files").
    #[test]
    fn srt_recipes_resolve_under_the_entry_lane() {
        let text = "a:\n  multinode: 1\n  srt-recipe-dir: d/e\n  scenarios: {}\nb:\n  srt-recipe-dir: d/e\n";
        let doc = Document {
            path: "configs/nvidia-master.yaml".into(),
            root: infx_yaml::parse_str(std::path::Path::new("m.yaml"), text)
                .expect("parses")
                .into(),
            text: text.into(),
        };
        let docs = [doc];
        let entries = entries(&docs);
        assert_eq!(
            entries[0].recipe_path("f.yaml"),
            "benchmarks/multi_node/srt-slurm-recipes/d/e/f.yaml"
        );
        assert_eq!(
            entries[1].recipe_path("f.yaml"),
            "benchmarks/single_node/srt-slurm-recipes/d/e/f.yaml"
        );
    }
}
