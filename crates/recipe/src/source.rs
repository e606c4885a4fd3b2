//! Provenance: which file (and which block of it) set each value of a merged tree.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// One input file taking part in a recipe (the recipe itself, a lane block, …).
#[derive(Debug, Clone)]
pub struct Source {
    /// The path as it should be shown to the user (relative to the repository root when known).
    pub path: PathBuf,
    pub text: Arc<str>,
}

/// Where a value was set: the source file (index into the recipe's sources) and the block of
/// that file (`base`, `override_x`, `zip_override_g[2]`, `lane:agentic-single`, or `` for a
/// plain recipe).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub source: usize,
    pub block: Arc<str>,
}

/// Origins keyed by YAML path (`roles.agg.args.tp-size`, `extra_mount[1]`). A lookup takes the
/// longest recorded prefix: a value written by a block is recorded where it was written, and
/// everything below it inherits that record.
#[derive(Debug, Clone, Default)]
pub struct Origins {
    map: BTreeMap<String, Origin>,
}

impl Origins {
    pub fn new(root: Origin) -> Self {
        let mut map = BTreeMap::new();
        map.insert(String::new(), root);
        Origins { map }
    }

    /// Records that `path` (and everything below it) was set by `origin`, forgetting older
    /// records below it.
    pub fn set(&mut self, path: &str, origin: Origin) {
        self.remove_below(path);
        self.map.insert(path.to_string(), origin);
    }

    /// Forgets `path` and every record below it (the value was deleted).
    pub fn remove_below(&mut self, path: &str) {
        let doomed: Vec<String> = self
            .map
            .range(path.to_string()..)
            .take_while(|(k, _)| k.starts_with(path))
            .filter(|(k, _)| is_below(k, path))
            .map(|(k, _)| k.clone())
            .collect();
        for k in doomed {
            self.map.remove(&k);
        }
    }

    /// The origin of the value at `path` (longest recorded prefix).
    pub fn get(&self, path: &str) -> Option<&Origin> {
        let mut p = path;
        loop {
            if let Some(o) = self.map.get(p) {
                return Some(o);
            }
            if p.is_empty() {
                return None;
            }
            p = parent_path(p);
        }
    }

    /// Re-keys every record below `prefix` to be relative to it (used when `base.x` becomes
    /// the variant's `x`). Records outside the prefix are dropped.
    pub fn subtree(&self, prefix: &str) -> Origins {
        let mut out = BTreeMap::new();
        if let Some(o) = self.get(prefix) {
            out.insert(String::new(), o.clone());
        }
        for (k, v) in self.map.range(prefix.to_string()..) {
            if !k.starts_with(prefix) {
                break;
            }
            if k.len() > prefix.len() && is_below(k, prefix) {
                let rest = &k[prefix.len()..];
                let rest = rest.strip_prefix('.').unwrap_or(rest);
                out.insert(rest.to_string(), v.clone());
            }
        }
        Origins { map: out }
    }

    /// Records `origin` for exactly `path`, keeping the records below it.
    pub fn set_exact(&mut self, path: &str, origin: Origin) {
        self.map.insert(path.to_string(), origin);
    }

    /// Replaces everything below `prefix` with `other`'s records, re-keyed under `prefix`.
    pub fn graft(&mut self, prefix: &str, other: &Origins) {
        self.remove_below(prefix);
        for (k, v) in &other.map {
            let key = if k.is_empty() {
                prefix.to_string()
            } else if k.starts_with('[') {
                format!("{prefix}{k}")
            } else {
                join_key(prefix, k)
            };
            self.map.insert(key, v.clone());
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Origin)> {
        self.map.iter().map(|(k, v)| (k.as_str(), v))
    }
}

fn is_below(k: &str, path: &str) -> bool {
    if path.is_empty() {
        return true;
    }
    k == path
        || (k.starts_with(path) && matches!(k.as_bytes().get(path.len()), Some(b'.') | Some(b'[')))
}

/// `a.b[2].c` → `a.b[2]` → `a.b` → `a` → ``.
pub(crate) fn parent_path(p: &str) -> &str {
    match p.rfind(['.', '[']) {
        Some(i) => &p[..i],
        None => "",
    }
}

/// Appends a mapping key to a path.
pub(crate) fn join_key(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Appends a list index to a path.
pub(crate) fn join_index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// The sources of a recipe, shared by every variant.
pub type Sources = Arc<Vec<Source>>;
