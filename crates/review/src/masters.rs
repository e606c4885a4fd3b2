//! A light read of master-config entries: what the review checks need (image, framework, runner,
//! model prefix, scenarios, referenced recipes). The schema rules live in `infx-config`.

use crate::recipe::walk_strings;
use infx_yaml::{Document, Node};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct Entry<'a> {
    pub key: &'a str,
    pub key_node: &'a Node,
    pub node: &'a Node,
    pub doc: &'a Document,
}

impl<'a> Entry<'a> {
    pub fn str_field(&self, k: &str) -> Option<&'a str> {
        self.node.get(k).and_then(Node::as_str)
    }
    pub fn image(&self) -> Option<&'a Node> {
        self.node.get("image")
    }
    pub fn framework(&self) -> Option<&'a str> {
        self.str_field("framework")
    }
    pub fn runner(&self) -> Option<&'a str> {
        self.str_field("runner")
    }
    pub fn model_prefix(&self) -> Option<&'a str> {
        self.str_field("model-prefix")
    }
    pub fn is_agentic(&self) -> bool {
        self.node
            .get("scenarios")
            .and_then(|s| s.get("agentic-coding"))
            .is_some()
    }
    /// A row's `srt-recipe` file as a tree path: under `srt-recipe-dir`, which is relative to the
    /// single-node or multinode recipe root ([Oct-newest]); without it, as written.
    pub fn srt_recipe_path(&self, file: &str) -> String {
        match infx_config::RecipeDir::of_entry(self.node) {
            Some(dir) => dir.file_path(file),
            None => config_file_path(file),
        }
    }

    /// Tree-relative recipe paths this entry references (`CONFIG_FILE=`, `EVAL_CONFIG_FILE=`,
    /// `srt-recipe:`, `eval-srt-recipe:`), selectors stripped, de-duplicated.
    pub fn recipe_refs(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |p: String| {
            if !out.contains(&p) {
                out.push(p)
            }
        };
        walk_strings(self.node, &mut |s, _| {
            for prefix in ["CONFIG_FILE=", "EVAL_CONFIG_FILE="] {
                if let Some(v) = s.strip_prefix(prefix) {
                    add(config_file_path(v));
                }
            }
        });
        crate::recipe::walk(self.node, &mut |k, _, v| {
            if matches!(k, "srt-recipe" | "eval-srt-recipe")
                && let Some(s) = v.as_str()
            {
                let file = s.split_once(':').map(|(p, _)| p).unwrap_or(s);
                add(self.srt_recipe_path(file));
            }
        });
        out
    }
}

/// `recipes/<x>` → the in-tree srt-slurm recipe dir; a bare name → llm-d recipes; a full path as is.
pub fn config_file_path(v: &str) -> String {
    let v = v.trim();
    let file = match v.rsplit_once(':') {
        Some((p, sel))
            if sel.starts_with("override_")
                || sel.starts_with("zip_override_")
                || sel == "base" =>
        {
            p
        }
        _ => v,
    };
    if let Some(path) = infx_config::checkout_recipe_path(file) {
        path
    } else if !file.contains('/') {
        format!("benchmarks/multi_node/llm-d-recipes/{file}")
    } else {
        file.to_string()
    }
}

/// Every entry of the master configs, in file order.
pub fn entries(masters: &[Document]) -> Vec<Entry<'_>> {
    let mut out = Vec::new();
    for doc in masters {
        if let Some(m) = doc.root.as_map() {
            for (k, kn, v) in m.iter() {
                if v.as_map().is_some() {
                    out.push(Entry {
                        key: k,
                        key_node: kn,
                        node: v,
                        doc,
                    });
                }
            }
        }
    }
    out
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
            .filter(|sel| {
                sel.starts_with("override_") || sel.starts_with("zip_override_") || sel == "base"
            });
        out.push((
            config_file_path(v),
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
pub fn usages(e: &Entry<'_>) -> Vec<(String, Usage)> {
    let mut out = Vec::new();
    let Some(scen) = e.node.get("scenarios").and_then(Node::as_map) else {
        return out;
    };
    for (name, _, rows) in scen.iter() {
        let agentic = name == "agentic-coding";
        crate::recipe::walk(rows, &mut |k, _, v| {
            if k == "additional-settings"
                && let Some(list) = v.as_seq()
            {
                settings_usages(e, agentic, list, &mut out);
            }
            // Eval-only references are not benchmark points (they measure real acceptance).
            if k == "srt-recipe"
                && let Some(r) = v.as_str()
            {
                let (file, selector) = match r.split_once(':') {
                    Some((f, sel)) => (f, Some(sel.to_string())),
                    None => (r, None),
                };
                out.push((
                    e.srt_recipe_path(file),
                    Usage {
                        key: e.key.to_string(),
                        master: e.doc.path.clone(),
                        selector,
                        agentic,
                        synthetic: false,
                        length: None,
                    },
                ));
            }
        });
    }
    out
}

/// Recipe path → the entries that reference it.
pub fn bindings(entries: &[Entry<'_>]) -> BTreeMap<String, Binding> {
    let mut out: BTreeMap<String, Binding> = BTreeMap::new();
    for e in entries {
        for r in e.recipe_refs() {
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
        for r in e.recipe_refs() {
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

    #[test]
    fn config_file_paths() {
        assert_eq!(
            config_file_path("recipes/a/b.yaml"),
            "benchmarks/multi_node/srt-slurm-recipes/a/b.yaml"
        );
        assert_eq!(
            config_file_path("recipes/a/b.yaml:override_x"),
            "benchmarks/multi_node/srt-slurm-recipes/a/b.yaml"
        );
        assert_eq!(
            config_file_path("x.yaml"),
            "benchmarks/multi_node/llm-d-recipes/x.yaml"
        );
        assert_eq!(
            config_file_path("benchmarks/multi_node/srt-slurm-recipes/t.yaml"),
            "benchmarks/multi_node/srt-slurm-recipes/t.yaml"
        );
    }

    /// The entry's recipe folder follows infx-config's reading: a truthy `multinode` selects the
    /// multinode recipes root (docs/config.md, "Recipe files").
    #[test]
    fn srt_recipes_resolve_under_the_entry_lane() {
        let text = "a:\n  multinode: 1\n  srt-recipe-dir: d/e\n  scenarios: {}\nb:\n  srt-recipe-dir: d/e\n";
        let doc = Document {
            path: "configs/nvidia-master.yaml".into(),
            root: infx_yaml::parse_str(std::path::Path::new("m.yaml"), text).expect("parses"),
            text: text.into(),
        };
        let docs = [doc];
        let entries = entries(&docs);
        assert_eq!(
            entries[0].srt_recipe_path("f.yaml"),
            "benchmarks/multi_node/srt-slurm-recipes/d/e/f.yaml"
        );
        assert_eq!(
            entries[1].srt_recipe_path("f.yaml"),
            "benchmarks/single_node/srt-slurm-recipes/d/e/f.yaml"
        );
    }
}
