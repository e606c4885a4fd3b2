//! Loads YAML the way PyYAML's `safe_load` reads it (YAML 1.1 scalars, anchors and aliases,
//! `<<` merge keys) into a tree in which every node knows its [`Span`] in the source.
//!
//! Stricter than PyYAML where PyYAML silently loses data: a key written twice in one mapping is
//! an error (`yaml/duplicate-key`), and alias expansion has a budget (`yaml/alias-budget`), so a
//! "billion laughs" file fails fast in bounded memory. Every error is a [`Diagnostic`] with
//! file, line and column; no input makes the loader panic.

mod chars;
pub mod codes;
mod edit;
mod input;
mod load;
mod resolve;
mod sections;
mod value;

pub mod parse_count;
pub use edit::{Edit, apply_edits};
/// The one walker and reader of tree files (docs/security.md).
pub use infx_fs::{FsError, Walk, walk_yaml, yaml_files};
pub use infx_report::{Pos, Span};
pub use load::{
    Built, Cut, DEFAULT_ALIAS_BUDGET, DuplicateKeys, FastBuilt, LoadOptions, Loaded,
    MAX_NESTING_DEPTH, Reuse, Uncut, build_both_ways, cut_file, load_bytes_with_previous,
    load_file, load_file_as_pyyaml, load_file_reusing, parse_str, parse_str_with,
};
pub use sections::{PieceParse, reparse_sections, top_level_sections};
pub use value::{Float, Mapping, Node, ScalarStyle, Value};

use infx_report::{Diagnostic, LineIndex};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A parsed file: its path as given, its text, and the root node.
#[derive(Debug, Clone)]
pub struct Document {
    pub path: PathBuf,
    pub text: Arc<str>,
    /// Shared, like the text: the base's run takes over the head's parse of a file it has with
    /// the same bytes, and a deep copy of thousands of trees cost a tree-wide move more than
    /// parsing them did (docs/performance.md, "Renames").
    pub root: Arc<Node>,
}

impl Document {
    /// The exact source text a node was written as (for plain and quoted scalars: the scalar
    /// itself, quotes included). Merged or aliased nodes return the text at their definition.
    pub fn source_of(&self, node: &Node) -> &str {
        self.text.get(node.span.byte_range()).unwrap_or("")
    }
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// An error diagnostic located at `node` in this document.
    pub fn error_at(
        &self,
        node: &Node,
        code: infx_report::Code,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::error(code, message).at(&self.path, node.span)
    }
    pub fn line_index(&self) -> LineIndex {
        LineIndex::new(&self.text)
    }
}

/// Documents this run already parsed, found by the path they were read from: a reader handed
/// one uses the parsed document instead of reading and parsing the file again (each file is
/// parsed once per run; docs/architecture.md). It also knows the files the run failed to read
/// or parse, so a reader of one gets that error rather than a second parse. A path in neither
/// is simply read from disk.
#[derive(Debug, Default)]
pub struct DocIndex<'a> {
    /// Keyed with a fast hasher: each reader looks up every file it uses (docs/performance.md).
    by_path: foldhash::HashMap<&'a Path, &'a Document>,
    failed: foldhash::HashMap<&'a Path, &'a Diagnostic>,
}

impl<'a> DocIndex<'a> {
    pub fn new(docs: impl IntoIterator<Item = &'a Document>) -> DocIndex<'a> {
        DocIndex {
            by_path: docs.into_iter().map(|d| (d.path.as_path(), d)).collect(),
            failed: Default::default(),
        }
    }
    /// The index also holding `failures`: (path as read, the error that stopped its load).
    pub fn with_failures(mut self, failures: &'a [(PathBuf, Diagnostic)]) -> DocIndex<'a> {
        self.failed
            .extend(failures.iter().map(|(p, d)| (p.as_path(), d)));
        self
    }
    /// The error this run's load of `path` stopped with, if it failed.
    pub fn failure(&self, path: &Path) -> Option<&'a Diagnostic> {
        self.failed.get(path).copied()
    }
    /// The document of `path`: the one already parsed, the error its load already met, or
    /// else the file read and parsed now ([`load_file`]).
    pub fn load(&self, path: &Path) -> Result<std::borrow::Cow<'a, Document>, Diagnostic> {
        if let Some(doc) = self.get(path) {
            return Ok(std::borrow::Cow::Borrowed(doc));
        }
        match self.failure(path) {
            Some(d) => Err(d.clone()),
            None => load_file(path).map(std::borrow::Cow::Owned),
        }
    }
    /// The document read from `path` (compared as written: callers join the same root).
    pub fn get(&self, path: &Path) -> Option<&'a Document> {
        self.by_path.get(path).copied()
    }
}

/// Every node of a tree, one line each (span, style, value), for comparing two readings of
/// the same text byte for byte (examples/dump_tree.rs, examples/fast_check.rs, the fast path's
/// tests; docs/performance.md).
#[doc(hidden)]
pub fn dump(root: &Node) -> String {
    let mut out = String::new();
    dump_into(root, 0, &mut out);
    out
}

fn dump_into(n: &Node, depth: usize, out: &mut String) {
    use std::fmt::Write;
    let (a, b) = (n.span.start, n.span.end);
    let _ = write!(
        out,
        "{:depth$}{:?} {}:{}:{}-{}:{}:{} ",
        "",
        n.style,
        a.offset(),
        a.line(),
        a.col(),
        b.offset(),
        b.line(),
        b.col()
    );
    match &n.value {
        Value::Seq(items) => {
            let _ = writeln!(out, "seq {}", items.len());
            for i in items {
                dump_into(i, depth + 1, out);
            }
        }
        Value::Map(m) => {
            let _ = writeln!(out, "map {}", m.len());
            for (k, v) in m.iter_nodes() {
                dump_into(k, depth + 1, out);
                dump_into(v, depth + 2, out);
            }
        }
        v => {
            let _ = writeln!(out, "{v:?}");
        }
    }
}
