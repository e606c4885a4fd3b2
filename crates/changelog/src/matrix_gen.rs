//! The real [`Generator`] for plans: `infx-matrix` over the master configs and runners of a
//! revision, plus the append-only scope check. Nothing here reads git: the caller reads the
//! files of a revision (xtask's `history` module, layout-aware) and hands them in.

use crate::MASTER_CONFIGS;
use crate::keys::{MasterKeys, resolve_keys};
use crate::plan::{GenEvals, GenRequest, Generator, Revision, Row};
use infx_matrix::ScenarioType;
use infx_matrix::{
    ConfigEntry, EvalMode, Json, MasterConfigs, Options, Runners, Selection, TestConfig,
};
use infx_yaml::{Document, LoadOptions, Node};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

pub(crate) const RUNNERS: &str = infx_config::layout::RUNNERS;

/// The generation inputs of one revision, parsed once.
#[derive(Debug, Clone)]
pub struct RevisionInputs {
    pub masters: Vec<Document>,
    pub runners: Option<Document>,
    /// Whether the masters state KV metadata (`infx_config::uses_kv_metadata`), worked out on
    /// first use and kept: it walks every master tree, and the planner asks once per request.
    /// A caller that knows it (validate's loaded configs) sets it.
    pub kv_metadata: std::sync::OnceLock<bool>,
}

fn parse_doc(path: &str, bytes: Vec<u8>) -> Result<Document, String> {
    let text = String::from_utf8(bytes).map_err(|_| format!("{path} is not UTF-8"))?;
    // PyYAML `safe_load` keeps the last of duplicate keys; so do we here.
    let opts = LoadOptions {
        duplicate_keys: infx_yaml::DuplicateKeys::KeepLast,
        ..LoadOptions::default()
    };
    let root = infx_yaml::parse_str_with(std::path::Path::new(path), &text, &opts)
        .map_err(|d| d.message)?;
    Ok(Document {
        path: PathBuf::from(path),
        text: Arc::from(text),
        root: root.into(),
    })
}

/// [`parse_doc`], from `previous` (the file's parse at another revision) where it can: the
/// same text is the same tree; of a large file that changed, the unchanged top-level sections
/// are taken over and only the rest parsed (`infx_yaml::reparse_sections`).
fn parse_doc_from(
    path: &str,
    bytes: Vec<u8>,
    previous: Option<&Document>,
) -> Result<Document, String> {
    let Some(previous) = previous else {
        return parse_doc(path, bytes);
    };
    if previous.text.as_bytes() == bytes.as_slice() {
        return Ok(Document {
            path: PathBuf::from(path),
            text: previous.text.clone(),
            root: previous.root.clone(),
        });
    }
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return parse_doc(path, bytes);
    };
    let opts = LoadOptions {
        duplicate_keys: infx_yaml::DuplicateKeys::KeepLast,
        ..LoadOptions::default()
    };
    match infx_yaml::reparse_sections(std::path::Path::new(path), text, previous, &opts) {
        Some(root) => Ok(Document {
            path: PathBuf::from(path),
            text: Arc::from(text),
            root: root.into(),
        }),
        None => parse_doc(path, bytes),
    }
}

impl RevisionInputs {
    /// The inputs of one revision from its files: `read(path)` gives the bytes of `path` (each
    /// of [`MASTER_CONFIGS`] in order, then [`RUNNERS`](infx_config::layout::RUNNERS)) at the revision, `None` when it is absent
    /// there, or the read error. Each file is parsed as soon as it is read; the first error wins.
    pub fn read_with(
        read: impl FnMut(&str) -> Result<Option<Vec<u8>>, String>,
    ) -> Result<RevisionInputs, String> {
        Self::read_with_previous(read, |_| None)
    }

    /// [`Self::read_with`], with `previous(path)` the parse of that file at another revision
    /// (the work tree's, when the base is read): unchanged files and sections are not parsed
    /// again (docs/performance.md, "Sections of a changed file").
    pub fn read_with_previous<'p>(
        mut read: impl FnMut(&str) -> Result<Option<Vec<u8>>, String>,
        previous: impl Fn(&str) -> Option<&'p Document>,
    ) -> Result<RevisionInputs, String> {
        let mut masters = Vec::new();
        for m in MASTER_CONFIGS {
            let data = read(m)?.ok_or_else(|| format!("Input file '{m}' does not exist."))?;
            masters.push(parse_doc_from(m, data, previous(m))?);
        }
        let runners = match read(RUNNERS)? {
            Some(d) => Some(parse_doc_from(RUNNERS, d, previous(RUNNERS))?),
            None => None,
        };
        Ok(RevisionInputs {
            masters,
            runners,
            kv_metadata: Default::default(),
        })
    }

    /// The merged masters (upstream `load_config_files(validate=False)` file-level rules).
    pub fn configs(&self) -> Result<MasterConfigs<'_>, String> {
        let kv_metadata = *self
            .kv_metadata
            .get_or_init(|| infx_config::uses_kv_metadata(&self.masters));
        MasterConfigs::from_documents_stating(&self.masters, kv_metadata).map_err(|d| d.message)
    }
}

/// `infx-matrix` as the plan's generator.
pub struct MatrixGenerator {
    pub head: RevisionInputs,
    pub base: Option<RevisionInputs>,
}

fn to_serde(j: &Json) -> serde_json::Value {
    match j {
        Json::Null => serde_json::Value::Null,
        Json::Bool(b) => (*b).into(),
        Json::Int(i) => (*i).into(),
        Json::Float(f) => serde_json::Number::from_f64(*f)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        Json::Str(s) => s.clone().into(),
        Json::List(l) => serde_json::Value::Array(l.iter().map(to_serde).collect()),
        Json::Object(o) => serde_json::Value::Object(
            o.iter()
                .map(|(k, v)| (k.to_string(), to_serde(v)))
                .collect(),
        ),
    }
}

impl Generator for MatrixGenerator {
    fn generate(&mut self, req: &GenRequest) -> Result<Vec<Row>, String> {
        let inputs = match req.revision {
            Revision::Head => &self.head,
            Revision::Base => self
                .base
                .as_ref()
                .ok_or("append-only base revision is missing generation inputs")?,
        };
        let configs = inputs.configs()?;
        let runners_doc = inputs
            .runners
            .as_ref()
            .ok_or("Runner config file 'configs/runners.yaml' does not exist.")?;
        let runners = Runners::from_node(&runners_doc.root);
        let opts = Options {
            selection: Selection::TestConfig(TestConfig {
                config_keys: req.config_keys.clone(),
                conc: None,
                seq_lens: None,
            }),
            evals: match req.evals {
                GenEvals::NoEvals => EvalMode::None,
                GenEvals::EvalsOnly => EvalMode::Subset,
                GenEvals::AllEvals => EvalMode::All,
            },
            runner_node_filter: None,
            scenario_types: req.scenario_types.clone(),
        };
        let rows = infx_matrix::generate(&configs, &runners, &opts).map_err(|d| d.message)?;
        Ok(rows
            .iter()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| (k.to_string(), to_serde(v)))
                    .collect()
            })
            .collect())
    }

    fn check_append_only_scope(
        &mut self,
        selected: &[(String, BTreeSet<ScenarioType>)],
    ) -> Result<(), String> {
        let base_inputs = self
            .base
            .as_ref()
            .ok_or("append-only base revision is missing generation inputs")?;
        let base = base_inputs.configs()?;
        let head = self.head.configs()?;
        check_scope(&base.entries, &head.entries, selected)
    }
}

fn py_list(v: &[&str]) -> String {
    format!(
        "[{}]",
        v.iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Upstream `validate_append_only_scope` plus the base-existence check.
pub(crate) fn check_scope(
    base: &[ConfigEntry<'_>],
    head: &[ConfigEntry<'_>],
    selected: &[(String, BTreeSet<ScenarioType>)],
) -> Result<(), String> {
    fn entry<'n>(m: &[ConfigEntry<'n>], k: &str) -> Option<ConfigEntry<'n>> {
        m.iter().find(|e| e.key == k).copied()
    }
    fn scenario<'n>(m: &[(&str, &'n Node)], name: &str) -> Option<&'n Node> {
        m.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
    }
    let is_sel = |k: &str| selected.iter().any(|(s, _)| s == k);
    let mut missing: Vec<&str> = selected
        .iter()
        .map(|(s, _)| s.as_str())
        .filter(|k| entry(base, k).is_none())
        .collect();
    if !missing.is_empty() {
        missing.sort_unstable();
        return Err(format!(
            "append-only requires every selected config to exist in the base revision; missing: {}",
            py_list(&missing)
        ));
    }
    let mut all: Vec<&str> = base.iter().chain(head).map(|e| e.key).collect();
    all.sort_unstable();
    all.dedup();
    let mut unrelated: Vec<&str> = all
        .into_iter()
        .filter(|k| !is_sel(k) && entry(base, k).map(|e| e.node) != entry(head, k).map(|e| e.node))
        .collect();
    if !unrelated.is_empty() {
        unrelated.sort_unstable();
        return Err(format!(
            "append-only PR changed configs not selected by its changelog entry: {}",
            py_list(&unrelated)
        ));
    }
    for (config, allowed) in selected {
        let (Some(b), Some(h)) = (entry(base, config), entry(head, config)) else {
            return Err(format!(
                "append-only requires every selected config to exist in the base revision; missing: ['{config}']"
            ));
        };
        let bs: Vec<(&str, &Node)> = b.scenarios().collect();
        let hs: Vec<(&str, &Node)> = h.scenarios().collect();
        let bk: BTreeSet<&str> = bs.iter().map(|(k, _)| *k).collect();
        let hk: BTreeSet<&str> = hs.iter().map(|(k, _)| *k).collect();
        if bk != hk {
            return Err(format!(
                "append-only added or removed a scenario in config '{config}'"
            ));
        }
        let allowed_names: BTreeSet<&str> = allowed.iter().map(|s| s.as_str()).collect();
        let unselected: Vec<&str> = bk
            .iter()
            .copied()
            .filter(|k| !allowed_names.contains(k))
            .collect();
        let top = |n: &Node| -> Vec<(String, Node)> {
            n.as_map()
                .map(|m| {
                    m.iter()
                        .filter(|(k, _, _)| *k != "scenarios")
                        .map(|(k, _, v)| (k.to_string(), v.clone()))
                        .collect()
                })
                .unwrap_or_default()
        };
        let same_top = {
            let (bt, ht) = (top(b.node), top(h.node));
            bt.len() == ht.len()
                && bt
                    .iter()
                    .all(|(k, v)| ht.iter().any(|(k2, v2)| k == k2 && v == v2))
        };
        if !unselected.is_empty() && !same_top {
            return Err(format!(
                "append-only changed config-wide fields that can affect scenarios outside its changelog scope: '{config}'"
            ));
        }
        for s in bk {
            if !allowed_names.contains(s) && scenario(&bs, s) != scenario(&hs, s) {
                return Err(format!(
                    "append-only changed a scenario outside its changelog scope: '{config}' / '{s}'"
                ));
            }
        }
    }
    Ok(())
}

/// The plan of the change `base..head`, the way upstream's
/// `process_changelog.py --base-ref base --head-ref head` computes it: the gate's added
/// entries, keys resolved against the head masters, rows from `infx-matrix`. The caller reads
/// the revisions: `base_changelog` and `head_changelog` are the changelog at each (`None` when
/// absent at the base), `head_inputs` and `base_inputs` give each revision's generation inputs
/// when the plan reaches them (the base's only for append-only entries). `base_label` and
/// `head_label` are recorded in the metadata as given.
#[allow(clippy::too_many_arguments)]
pub fn plan_between(
    base_changelog: Option<&[u8]>,
    head_changelog: &[u8],
    base_label: &str,
    head_label: &str,
    opts: crate::plan::PlanOptions,
    dialect: crate::Dialect,
    head_inputs: impl FnOnce() -> Result<RevisionInputs, String>,
    base_inputs: impl FnOnce() -> Result<RevisionInputs, String>,
) -> Result<serde_json::Value, crate::plan::PlanError> {
    use crate::plan::{PlanError, PlanStage};
    let err = |stage: PlanStage| move |m: String| PlanError { stage, message: m };
    // The processor's own steps (the newline check belongs to the CLI gate, not the plan).
    let diff =
        infx_git::diff_lines(base_changelog, Some(head_changelog)).map_err(|e| PlanError {
            stage: PlanStage::Read,
            message: e.to_string(),
        })?;
    if let Some(d) = diff
        .deleted
        .iter()
        .find(|d| !crate::text::py_blank(&d.content))
    {
        return Err(PlanError {
            stage: PlanStage::Deletion,
            message: format!(
                "Deletions are not allowed in {}. Only additions to the changelog are permitted. Found deleted line: {}",
                crate::CHANGELOG_PATH,
                d.content
            ),
        });
    }
    let entries = crate::gate::parse_diff_additions(&diff, dialect, opts.modifiers)?.entries;
    let head_inputs = head_inputs().map_err(err(PlanStage::MasterConfigs))?;
    let master = {
        let configs = head_inputs
            .configs()
            .map_err(err(PlanStage::MasterConfigs))?;
        MasterKeys::from_keys(configs.keys().map(str::to_string))
    };
    let resolved = entries
        .iter()
        .map(|e| {
            resolve_keys(&e.config_keys, &master).map_err(|k| PlanError {
                stage: PlanStage::ConfigKey,
                message: k.message,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let base_inputs = if entries.iter().any(|e| e.append_only) {
        Some(base_inputs().map_err(|m| PlanError {
            stage: PlanStage::AppendOnly,
            message: format!("append-only base revision is missing generation inputs: {m}"),
        })?)
    } else {
        None
    };
    let mut generator = MatrixGenerator {
        head: head_inputs,
        base: base_inputs,
    };
    crate::plan::build_plan(
        &entries,
        &resolved,
        base_label,
        head_label,
        dialect,
        opts,
        &mut generator,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn doc(src: &str) -> infx_yaml::Document {
        infx_yaml::Document {
            path: "m".into(),
            root: infx_yaml::parse_str(Path::new("m"), src).unwrap().into(),
            text: src.into(),
        }
    }

    #[test]
    fn scope_rules() {
        let base = doc(
            "a:\n  image: x\n  scenarios:\n    fixed-seq-len: [1]\n    agentic-coding: [2]\nb:\n  image: y\n",
        );
        let ok_head = doc(
            "a:\n  image: x\n  scenarios:\n    fixed-seq-len: [1]\n    agentic-coding: [2, 3]\nb:\n  image: y\n",
        );
        let (base, ok_head) = ([base], [ok_head]);
        let b = MasterConfigs::from_documents(&base).unwrap().entries;
        let h = MasterConfigs::from_documents(&ok_head).unwrap().entries;
        let agentic = vec![(
            "a".to_string(),
            BTreeSet::from([ScenarioType::AgenticCoding]),
        )];
        assert!(check_scope(&b, &h, &agentic).is_ok());
        let fixed = vec![("a".to_string(), BTreeSet::from([ScenarioType::FixedSeqLen]))];
        assert!(
            check_scope(&b, &h, &fixed)
                .unwrap_err()
                .contains("outside its changelog scope")
        );
        let other = vec![("b".to_string(), BTreeSet::from([ScenarioType::FixedSeqLen]))];
        assert!(
            check_scope(&b, &h, &other)
                .unwrap_err()
                .contains("not selected")
        );
        let missing = vec![("z".to_string(), BTreeSet::from([ScenarioType::FixedSeqLen]))];
        assert!(
            check_scope(&b, &h, &missing)
                .unwrap_err()
                .contains("missing: ['z']")
        );
    }
}
