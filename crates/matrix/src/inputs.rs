//! The generator's inputs: master-config entries (merged across files, in file then key order)
//! and the runner inventory. Loading does the file-level checks the upstream loader does
//! (missing file, non-mapping root, `*` in a key, a key in two files); the per-entry schema
//! rules belong to `infx-config`.

use crate::codes;
use infx_report::Diagnostic;
use infx_yaml::{Document, Mapping, Node, Value};
use std::path::{Path, PathBuf};

/// One master-config entry as written (infx-config's view; the generator echoes values as
/// written, as upstream's generator reads the dict). Its document's path is the file as named
/// on the command line.
pub use infx_config::EntryView as ConfigEntry;

/// Every entry of the given master configs, in argument order then key order.
#[derive(Debug, Clone, Default)]
pub struct MasterConfigs<'a> {
    pub entries: Vec<ConfigEntry<'a>>,
    /// Whether the tree states KV metadata in upstream #2096's form (docs/config.md, "Rules
    /// carry their day"): only then does a disaggregated row need `kv-p2p-transfer`.
    pub kv_metadata: bool,
}

impl<'a> MasterConfigs<'a> {
    /// Merges already-loaded documents the way upstream's `load_config_files` does; messages
    /// name each file by its `Document::path`.
    pub fn from_documents(docs: &'a [Document]) -> Result<Self, Diagnostic> {
        Self::merged(docs, || infx_config::uses_kv_metadata(docs))
    }

    /// [`Self::from_documents`] of documents known to state KV metadata or not
    /// (`infx_config::uses_kv_metadata` of them): a walk of every master tree less.
    pub fn from_documents_stating(
        docs: &'a [Document],
        kv_metadata: bool,
    ) -> Result<Self, Diagnostic> {
        Self::merged(docs, || kv_metadata)
    }

    /// [`Self::from_documents`] of a tree's loaded configs, which already know whether they
    /// state KV metadata (a walk of every master tree less per use).
    pub fn from_loaded(loaded: &'a infx_config::LoadedConfigs) -> Result<Self, Diagnostic> {
        Self::from_documents_stating(&loaded.masters, loaded.kv_metadata)
    }

    fn merged(
        docs: &'a [Document],
        kv_metadata: impl FnOnce() -> bool,
    ) -> Result<Self, Diagnostic> {
        let mut entries: Vec<ConfigEntry<'a>> = Vec::new();
        let mut seen: std::collections::HashSet<&'a str> = std::collections::HashSet::new();
        for doc in docs {
            let Some(map) = doc.root.as_map() else {
                return Err(Diagnostic::error(
                    codes::CONFIG_NOT_MAPPING,
                    format!(
                        "Config file '{}' must contain a dictionary",
                        doc.path.display()
                    ),
                )
                .at(&doc.path, doc.root.span)
                .with_help("a master config is a mapping of config keys to entries"));
            };
            let mut dups: Vec<&str> = Vec::new();
            for key in map.keys() {
                if seen.contains(key) {
                    dups.push(key);
                }
            }
            if !dups.is_empty() {
                dups.sort_unstable();
                let first = map.get_entry(dups[0]).map(|(k, _)| k.span);
                let mut d = Diagnostic::error(
                    codes::DUPLICATE_CONFIG_KEY,
                    format!(
                        "Duplicate configuration keys found in '{}': {}",
                        doc.path.display(),
                        dups.join(", ")
                    ),
                )
                .with_path(&doc.path)
                .with_help("every config key must be unique across all master configs");
                if let Some(span) = first {
                    d = d.with_span(span);
                }
                return Err(d);
            }
            for entry in infx_config::entries_in(doc) {
                seen.insert(entry.key);
                entries.push(entry);
            }
        }
        for e in &entries {
            if e.key.contains('*') {
                return Err(Diagnostic::error(
                    codes::WILDCARD_KEY,
                    format!(
                        " Wildcard '*' is not allowed in master config keys: '{}'",
                        e.key
                    ),
                )
                .at(e.path(), e.key_node.span)
                .with_help("'*' is reserved for changelog config-key patterns; rename the key"));
            }
        }
        Ok(MasterConfigs {
            entries,
            kv_metadata: kv_metadata(),
        })
    }

    pub fn get(&self, key: &str) -> Option<&ConfigEntry<'a>> {
        self.entries.iter().find(|e| e.key == key)
    }
    pub fn keys(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.entries.iter().map(|e| e.key)
    }
}

/// Loads the master configs (in order) and checks the files exist first, with upstream's
/// messages. Relative paths are resolved against `base` but reported as given.
pub fn load_config_documents(files: &[PathBuf], base: &Path) -> Result<Vec<Document>, Diagnostic> {
    files
        .iter()
        .map(|f| load_named(f, base, "Input file", "check the --config-files paths"))
        .collect()
}

/// Loads the runner inventory with upstream's missing-file message.
pub fn load_runner_document(file: &Path, base: &Path) -> Result<Document, Diagnostic> {
    load_named(
        file,
        base,
        "Runner config file",
        "check --runner-config (default configs/runners.yaml)",
    )
}

/// Loads `file` (resolved against `base`, reported as given); a missing file is upstream's
/// "`<what>` '`<file>`' does not exist." with `help`.
fn load_named(file: &Path, base: &Path, what: &str, help: &str) -> Result<Document, Diagnostic> {
    let full = base.join(file);
    if !full.is_file() {
        return Err(Diagnostic::error(
            codes::MISSING_FILE,
            format!("{what} '{}' does not exist.", file.display()),
        )
        .with_help(help));
    }
    let mut doc = infx_yaml::load_file(&full)?;
    doc.path = file.to_path_buf();
    Ok(doc)
}

/// `runners.yaml`: labels → concrete runners, and hardware facts per label. Both shapes are
/// read: [Aug] `hardware.<label>` and [Oct] `clusters.<id>` (addressed as `cluster:<id>`).
#[derive(Debug, Clone, Default)]
pub struct Runners<'a> {
    pub labels: Vec<(&'a str, Vec<&'a str>)>,
    pub hardware: Vec<(String, &'a Mapping)>,
    /// [Oct] inventory shape (`clusters`): multinode rows then carry `node-count`
    /// (docs/matrix.md, "Node count").
    pub oct: bool,
    /// The benchmark tree, for recipe-derived node counts; without it the topology fallback
    /// is used for every row.
    pub tree_root: Option<PathBuf>,
    /// Recipe files this run already parsed (by absolute path): read from here, not again.
    pub parsed: Option<&'a infx_yaml::DocIndex<'a>>,
}

impl<'a> Runners<'a> {
    pub fn from_node(root: &'a Node) -> Self {
        let mut r = Runners::default();
        if let Some(labels) = root.get("labels").and_then(Node::as_map) {
            for (label, _, nodes) in labels.iter() {
                let list = nodes
                    .as_seq()
                    .map(|s| s.iter().filter_map(Node::as_str).collect())
                    .unwrap_or_default();
                r.labels.push((label, list));
            }
        }
        if let Some(hw) = root.get("hardware").and_then(Node::as_map) {
            for (label, _, facts) in hw.iter() {
                if let Some(m) = facts.as_map() {
                    r.hardware.push((label.to_string(), m));
                }
            }
        }
        if let Some(clusters) = root.get("clusters").and_then(Node::as_map) {
            r.oct = true;
            for (id, _, facts) in clusters.iter() {
                if let Some(m) = facts.as_map() {
                    r.hardware.push((format!("cluster:{id}"), m));
                }
            }
        }
        r
    }

    /// Sets the benchmark tree that recipe references are resolved against.
    pub fn with_tree_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.tree_root = Some(root.into());
        self
    }

    /// GPUs per node of a runner or worker hardware label: the exact record, else the GPU
    /// family's (the text before the first `-` after `cluster:`) when all its records agree.
    pub fn scheduling_gpus_per_node(&self, label: &str) -> Result<i64, String> {
        let gpn = |m: &Mapping| m.get("gpus-per-node").and_then(Node::as_i64);
        if let Some(m) = self.facts(label) {
            return gpn(m).ok_or_else(|| format!("Cannot resolve gpus-per-node for '{label}'"));
        }
        let want = gpu_family(label);
        let mut values: Vec<i64> = self
            .hardware
            .iter()
            .filter(|(l, _)| gpu_family(l) == want)
            .filter_map(|(_, m)| gpn(m))
            .collect();
        values.sort_unstable();
        values.dedup();
        match values.as_slice() {
            [one] => Ok(*one),
            [] => Err(format!("Cannot resolve gpus-per-node for '{label}'")),
            many => Err(format!("Ambiguous gpus-per-node for '{label}': {many:?}")),
        }
    }

    pub fn nodes_for_label(&self, label: &str) -> &[&'a str] {
        self.labels
            .iter()
            .find(|(l, _)| *l == label)
            .map(|(_, n)| n.as_slice())
            .unwrap_or(&[])
    }
    pub fn is_label(&self, label: &str) -> bool {
        self.labels.iter().any(|(l, _)| *l == label)
    }
    pub fn facts(&self, label: &str) -> Option<&'a Mapping> {
        self.hardware
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, m)| *m)
    }
    /// An integer hardware fact, or upstream's error naming the available records.
    pub fn hardware_int(&self, label: &str, field: &str) -> Result<i64, String> {
        match self
            .facts(label)
            .and_then(|m| m.get(field))
            .map(|n| &n.value)
        {
            Some(Value::Int(i)) => Ok(*i),
            _ => {
                let mut keys: Vec<&str> = self.hardware.iter().map(|(l, _)| l.as_str()).collect();
                keys.sort_unstable();
                keys.dedup();
                Err(format!(
                    "Runner '{label}' requires '{field}' in runner hardware metadata. Available hardware keys: {}",
                    keys.join(", ")
                ))
            }
        }
    }
}

/// The GPU family of a runner or hardware label: the text before the first `-`, after
/// `cluster:` (`cluster:gb300-nv` → `gb300`), whose records a label without its own falls back
/// to ([`Runners::scheduling_gpus_per_node`]).
pub fn gpu_family(label: &str) -> &str {
    label
        .strip_prefix("cluster:")
        .unwrap_or(label)
        .split('-')
        .next()
        .unwrap_or("")
}
