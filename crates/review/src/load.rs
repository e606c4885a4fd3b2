//! Reading the files of a benchmark tree the reviewer checks need beyond the documents the
//! caller parsed (file I/O only; no checks here): golden curves, CODEOWNERS, waivers. The tree
//! itself is loaded by validate's load, which `review check` and `review signoff` share
//! (docs/architecture.md).
//!
//! Layouts: [Aug] (`configs/`, `golden_al_distribution/`, `.github/CODEOWNERS` in the tree) and
//! [Oct] (`inferencex-e2e/` with `configs/srt-recipes/`, golden curves under `infx/`, CODEOWNERS at
//! the repository root one level up).

use crate::codeowners::{self, CodeOwners};
use crate::codes;
use crate::golden::{self, Golden};
use crate::patches::Waivers;
use infx_report::Diagnostic;
use infx_yaml::{DocIndex, Document};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Reads a YAML file and names it by `rel` (the path diagnostics show).
pub(crate) fn load_doc(abs: &Path, rel: &Path) -> Result<Document, Diagnostic> {
    // infx-fs: confined to the repository, regular files only, size-limited (docs/security.md).
    let text = infx_fs::read_to_string(abs).map_err(|e| {
        Diagnostic::error(codes::IO, format!("cannot read {}: {e}", rel.display())).with_path(rel)
    })?;
    // Duplicate keys are the YAML check's finding; here PyYAML's reading (last value wins) is
    // what the launcher sees.
    let opts = infx_yaml::LoadOptions {
        duplicate_keys: infx_yaml::DuplicateKeys::KeepLast,
        ..Default::default()
    };
    let root = infx_yaml::parse_str_with(rel, &text, &opts)?;
    Ok(Document {
        path: rel.to_path_buf(),
        text: Arc::from(text),
        root: root.into(),
    })
}

/// [`load_doc`], taken from `parsed` when this run already parsed `abs` (still named `rel`).
/// A file the YAML step parsed has no duplicate key, so its tree is what [`load_doc`] reads.
pub(crate) fn load_doc_in(
    abs: &Path,
    rel: &Path,
    parsed: &DocIndex<'_>,
) -> Result<Document, Diagnostic> {
    match parsed.get(abs) {
        Some(doc) => Ok(Document {
            path: rel.to_path_buf(),
            text: doc.text.clone(),
            root: doc.root.clone(),
        }),
        // The run's load already met this file's error: not read and parsed again.
        None => match parsed.failure(abs) {
            Some(d) => Err(d.clone().with_path(rel)),
            None => load_doc(abs, rel),
        },
    }
}

fn yaml_files_under(dir: &Path, out: &mut Vec<PathBuf>, diags: &mut Vec<Diagnostic>) {
    // A folder that cannot be walked is an error: its recipes would otherwise silently drop
    // out of review and the check would pass on nothing (docs/security.md).
    let walk = infx_yaml::walk_yaml(dir);
    diags.extend(walk.problems.iter().map(infx_fs::FsError::to_diagnostic));
    out.extend(walk.files);
}

fn rel(root: &Path, p: &Path) -> PathBuf {
    p.strip_prefix(root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| p.to_path_buf())
}

/// Where the CODEOWNERS file of a tree is (GitHub's order), also one level up for the [Oct]
/// layout. Returns (absolute, display path).
pub fn find_codeowners(root: &Path) -> Option<(PathBuf, PathBuf)> {
    let candidates = [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"];
    // The parent only when it is still the repository (a tree in a subfolder, as the bundled
    // `inferencex-e2e/`): beside an upstream-style root it is outside and never read.
    let parent = root.parent().filter(|p| infx_fs::is_inside(p));
    for base in [Some(root), parent].into_iter().flatten() {
        for c in candidates {
            let p = base.join(c);
            if p.is_file() {
                let shown = if base == root {
                    PathBuf::from(c)
                } else {
                    PathBuf::from("..").join(c)
                };
                return Some((p, shown));
            }
        }
    }
    None
}

/// Parses the CODEOWNERS file of a tree, if any.
pub fn load_codeowners(root: &Path, diags: &mut Vec<Diagnostic>) -> Option<CodeOwners> {
    let (abs, shown) = find_codeowners(root)?;
    match infx_fs::read_to_string(&abs) {
        Ok(text) => {
            let (co, d) = codeowners::parse(&shown, &text);
            diags.extend(d);
            Some(co)
        }
        Err(e) => {
            diags.push(Diagnostic::error(
                codes::IO,
                format!("cannot read {}: {e}", abs.display()),
            ));
            None
        }
    }
}

/// Loads the golden acceptance-length curves of a tree, reading the curves this run already
/// parsed from `parsed`.
pub fn load_golden_in(root: &Path, parsed: &DocIndex<'_>, diags: &mut Vec<Diagnostic>) -> Golden {
    let mut g = Golden::new();
    // The tree's golden folders, then the one beside the tree (upstream's `infx/` next to
    // `inferencex-e2e/`).
    let [golden, infx_golden] = infx_config::layout::GOLDEN_DIRS;
    let dirs = [
        root.join(golden),
        root.join(infx_golden),
        root.parent()
            .filter(|p| infx_fs::is_inside(p))
            .map(|p| p.join(infx_golden))
            .unwrap_or_default(),
    ];
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        let mut files = Vec::new();
        yaml_files_under(dir, &mut files, diags);
        for f in files {
            let Some(stem) = f.file_stem().map(|s| s.to_string_lossy().to_string()) else {
                continue;
            };
            if g.contains_key(&stem) {
                continue;
            }
            let shown = rel(root, &f);
            let curve = load_doc_in(&f, &shown, parsed)
                .and_then(|d| golden::parse_curve(&stem, &shown, &d.root));
            match curve {
                Ok(c) => {
                    g.insert(stem, c);
                }
                Err(d) => diags.push(d),
            }
        }
        if !g.is_empty() {
            break; // the first directory with curves is the tree's
        }
    }
    g
}

/// `docs/waiver/<N>.md` files of a tree.
pub fn load_waivers(root: &Path) -> Waivers {
    let mut w = Waivers::new();
    let dir = root.join("docs/waiver");
    // No waiver folder (or an unreadable one) waives nothing: fail closed.
    let Ok(entries) = infx_fs::list_dir(&dir) else {
        return w;
    };
    for p in entries {
        let Some(n) = p
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.parse::<u64>().ok())
        else {
            continue;
        };
        if p.extension().is_some_and(|x| x == "md")
            && let Ok(text) = infx_fs::read_to_string(&p)
        {
            w.insert(n, (format!("docs/waiver/{n}.md"), text));
        }
    }
    w
}
