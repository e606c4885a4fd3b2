//! The verdict is about the change (docs/baseline.md): with a change, the base revision's tree
//! is validated too — exported from git objects and read by the same loader and checks — and
//! every finding is `new` or `unchanged` by a fingerprint that survives line shifts. Only new
//! errors fail; what the base already had is counted once.

use super::inputs::Inputs;
use super::steps::ChangeMode;
use super::{CheckResult, Options, RunScope};
use infx_report::{BaselineState, Code, Diagnostic, SourceMap};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What the base comparison did, for the summary.
#[derive(Debug, Default)]
pub struct Baseline {
    /// The base commit compared with (abbreviated).
    pub base: String,
    /// Findings the base already had, per code, in code order.
    pub unchanged: Vec<(Code, usize)>,
    /// Why no comparison was made although a change exists (the findings then all count).
    pub not_compared: Option<String>,
    pub elapsed: Duration,
}

impl Baseline {
    /// `already on the base: image/unpinned 202, config/X5 8`, or nothing when none was.
    pub fn summary_line(&self) -> Option<String> {
        if let Some(why) = &self.not_compared {
            return Some(format!(
                "baseline    not compared ({why}): every finding counts"
            ));
        }
        if self.unchanged.is_empty() {
            return None;
        }
        let counts: Vec<String> = self
            .unchanged
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        Some(format!(
            "baseline    already on the base {}: {} (not blamed on the change; --show-baseline lists them)  {}",
            self.base,
            counts.join(", "),
            super::format_duration(self.elapsed)
        ))
    }
}

/// The largest blob exported (the file layer's per-file limit: a larger file is refused at
/// head too, docs/security.md).
const MAX_BLOB: u64 = infx_fs::MAX_FILE_BYTES;

/// Gives every finding of `checks` its baseline state when the run has a change to compare
/// with. `sources` holds the texts the findings name (repository-relative paths). `None` when
/// there is nothing to compare: no change (a clean clone's stand-in, `--all`, outside git), or
/// no finding at all — then the base is not even read.
pub(super) fn compare(
    inputs: &Inputs,
    checks: &mut [CheckResult],
    sources: &SourceMap,
) -> Option<Baseline> {
    let (opts, change, root) = (&inputs.opts, &inputs.change, inputs.root.as_path());
    if opts.all || opts.no_repository || change.mode != ChangeMode::Change {
        return None;
    }
    if checks.iter().all(|c| c.diagnostics.is_empty()) {
        return None;
    }
    let started = Instant::now();
    let base = change.base.clone()?;
    let mut outcome = Baseline {
        base: base.get(..12).unwrap_or(&base).to_string(),
        ..Baseline::default()
    };
    let scope = RunScope {
        files: head_files(inputs),
        touched: inputs.touched.clone(),
    };
    let base_findings = match base_findings(change, root, &base, scope) {
        Ok(found) => found,
        Err(why) => {
            outcome.not_compared = Some(why);
            outcome.elapsed = started.elapsed();
            return Some(outcome);
        }
    };
    let compared = Instant::now();
    let added = added_lines(change);
    let mut remaining: HashMap<String, usize> = HashMap::new();
    for f in base_findings {
        *remaining.entry(f).or_default() += 1;
    }
    // Findings on lines the change did not add take the base's findings first: of two alike,
    // the one on an added line is the new one.
    let mut order: Vec<(bool, usize, usize)> = Vec::new();
    for (ci, c) in checks.iter().enumerate() {
        for (di, d) in c.diagnostics.iter().enumerate() {
            order.push((on_added_line(d, &added), ci, di));
        }
    }
    order.sort();
    let mut unchanged: HashMap<Code, usize> = HashMap::new();
    for (_, ci, di) in order {
        let d = &mut checks[ci].diagnostics[di];
        let key = fingerprint(d, sources);
        let state = match remaining.get_mut(&key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                *unchanged.entry(d.code).or_default() += 1;
                BaselineState::Unchanged
            }
            _ => BaselineState::New,
        };
        d.baseline = Some(state);
        d.fingerprint = Some(digest(&key));
    }
    let mut unchanged: Vec<(Code, usize)> = unchanged.into_iter().collect();
    unchanged.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    outcome.unchanged = unchanged;
    if std::env::var_os("INFX_BASELINE_TRACE").is_some() {
        eprintln!(
            "baseline: total {:?}, matching {:?}",
            started.elapsed(),
            compared.elapsed()
        );
    }
    outcome.elapsed = started.elapsed();
    Some(outcome)
}

/// The base's findings as fingerprints: its tree exported from git objects into a temporary
/// folder outside any repository, validated by the same load and checks over the head's scope.
fn base_findings(
    change: &super::steps::ChangeInfo,
    root: &Path,
    base: &str,
    scope: RunScope,
) -> Result<Vec<String>, String> {
    let repo_root = change
        .repo_root
        .as_deref()
        .ok_or("no repository")?
        .canonicalize()
        .map_err(|e| format!("the repository cannot be resolved: {e}"))?;
    let tree_rel = root
        .strip_prefix(&repo_root)
        .map_err(|_| "the tree is not inside its repository".to_string())?;
    let started = Instant::now();
    let tmp = export_dir().map_err(|e| format!("no temporary folder for the base: {e}"))?;
    let export = tmp.path().join("repo");
    let base_root = export.join(tree_rel);
    let subdir = tree_rel.to_string_lossy().replace('\\', "/");
    change
        .with_base(|repo, commit| export_base(repo, commit, &subdir, &export, &base_root))
        .ok_or_else(|| format!("the base {base} cannot be read"))??;
    // Reads in this run are confined to the repository; the export is one more root.
    if infx_fs::is_confining() {
        let _ = infx_fs::confine_to(&export);
    }
    let exported = Instant::now();
    let report = super::validate(&Options {
        no_repository: true,
        scope: Some(scope),
        display_root: Some(export.clone()),
        hermetic: true,
        ..Options::new(&base_root)
    });
    if std::env::var_os("INFX_BASELINE_TRACE").is_some() {
        eprintln!(
            "baseline: export {:?}, checks {:?}\n{}",
            exported.duration_since(started),
            exported.elapsed(),
            super::summary_text(&report)
        );
    }
    let sources = &report.sources.0;
    Ok(report
        .checks
        .iter()
        .flat_map(|c| &c.diagnostics)
        .map(|d| fingerprint(d, sources))
        .collect())
}

/// A temporary folder for the export, in memory where the system has one: on a disk mounted
/// with online discard, creating and unlinking a few hundred files cost ~0.5 s, on tmpfs ~20 ms
/// (docs/baseline.md, "Cost").
fn export_dir() -> std::io::Result<tempfile::TempDir> {
    let builder = || {
        let mut b = tempfile::Builder::new();
        b.prefix("infx-base-");
        b
    };
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = builder().tempdir_in(shm)
    {
        return Ok(dir);
    }
    builder().tempdir()
}

/// Whether the base's run needs a tree file of this path (tree-relative): what validate reads
/// from a work tree rather than from git — YAML anywhere (configs, recipes, lane blocks), golden curves,
/// waivers and CODEOWNERS (crates/review/src/load.rs). Launchers and other texts reach the
/// checks through the change's diff, never from the base's files.
fn read_by_validate(path: &str) -> bool {
    // The changelog's findings are about the change (append-only against the base), so the
    // base's own is not read: its parse is the base run's largest (a 395 KB file upstream).
    if path == "perf-changelog.yaml" {
        return false;
    }
    path.ends_with(".yaml")
        || path.ends_with(".yml")
        || path.contains("golden_al_distribution/")
        || path.starts_with("docs/waiver/")
        || path.ends_with("CODEOWNERS")
}

/// The files the head's run parsed, relative to its tree: the base's run parses the same.
fn head_files(inputs: &Inputs) -> Vec<PathBuf> {
    let rel = |p: &Path| p.strip_prefix(&inputs.root).ok().map(Path::to_path_buf);
    let mut files: Vec<PathBuf> = inputs
        .documents()
        .filter_map(|d| rel(&d.path))
        .chain(inputs.raw_sources.iter().filter_map(|(p, _)| rel(p)))
        .chain(inputs.parse_failures.iter().filter_map(|(p, _)| rel(p)))
        .collect();
    files.sort();
    files.dedup();
    files
}

/// Writes the base's tree below `base_root` (and, for a nested tree, the repository's
/// CODEOWNERS below `export`, where the review checks look for it).
fn export_base(
    repo: &infx_git::Repo,
    commit: infx_git::Oid,
    subdir: &str,
    export: &Path,
    base_root: &Path,
) -> Result<(), String> {
    std::fs::create_dir_all(base_root).map_err(|e| format!("cannot export the base: {e}"))?;
    repo.export_tree(commit, subdir, base_root, MAX_BLOB, &read_by_validate)
        .map_err(|e| format!("cannot export the base: {}", e.message))?;
    if !subdir.is_empty() {
        for file in [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"] {
            if let Ok(Some(b)) = repo.blob_at(commit, file) {
                let to = export.join(file);
                if let Some(dir) = to.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                let _ = std::fs::write(&to, &b.data);
            }
        }
    }
    Ok(())
}

/// Added lines per repository-relative path.
fn added_lines(change: &super::steps::ChangeInfo) -> HashMap<PathBuf, HashSet<usize>> {
    let mut out = HashMap::new();
    if let Some(Ok(c)) = &change.loaded {
        for t in &c.texts {
            out.insert(t.path.clone(), t.added.iter().copied().collect());
        }
    }
    out
}

fn on_added_line(d: &Diagnostic, added: &HashMap<PathBuf, HashSet<usize>>) -> bool {
    match (&d.path, d.span) {
        (Some(p), Some(s)) => added.get(p).is_some_and(|l| l.contains(&s.start.line())),
        _ => false,
    }
}

/// What identifies a finding across revisions: its code, file, message without positions and
/// the text of the line it points at (trimmed), so that lines inserted above it keep it the
/// same finding (docs/baseline.md, "Fingerprint").
pub(crate) fn fingerprint(d: &Diagnostic, sources: &SourceMap) -> String {
    let path = d
        .path
        .as_deref()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let line = match (&d.path, d.span) {
        (Some(p), Some(s)) => sources.line(p, s.start.line()).unwrap_or("").trim(),
        _ => "",
    };
    format!(
        "{}\u{1f}{path}\u{1f}{}\u{1f}{line}",
        d.code,
        without_positions(&d.message)
    )
}

/// A short stable digest of a fingerprint (SARIF's `partialFingerprints`).
fn digest(key: &str) -> String {
    let hex = infx_image::reference::Digest::sha256_of(key.as_bytes()).encoded;
    hex.get(..32).unwrap_or(&hex).to_string()
}

/// `msg` with line and column numbers masked: `line 12`, `lines 3-5`, `file.yaml:12:4`,
/// `at 7:2` all read the same wherever the finding moved.
pub(crate) fn without_positions(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    let mut masked_last = false;
    while let Some(i) = rest.find(|c: char| c.is_ascii_digit()) {
        let (before, digits_on) = rest.split_at(i);
        let len = digits_on
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits_on.len());
        let (digits, after) = digits_on.split_at(len);
        out.push_str(before);
        let so_far = out.as_str();
        let positional = so_far.ends_with("line ")
            || so_far.ends_with("lines ")
            || so_far.ends_with("line: ")
            || so_far.ends_with("col ")
            || so_far.ends_with("column ")
            || so_far.ends_with(':')
            || (masked_last && (before == "-" || before == "–" || before == ", "))
            || (after.starts_with(':') && after[1..].starts_with(|c: char| c.is_ascii_digit()));
        if positional {
            out.push('#');
        } else {
            out.push_str(digits);
        }
        masked_last = positional;
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_masked_and_values_kept() {
        assert_eq!(
            without_positions("duplicate key `tp` (first at line 12, col 3)"),
            "duplicate key `tp` (first at line #, col #)"
        );
        assert_eq!(
            without_positions("see configs/a.yaml:120:7 and lines 4-9"),
            "see configs/a.yaml:#:# and lines #-#"
        );
        assert_eq!(
            without_positions("conc 64 on tp 4 at 10:2"),
            "conc 64 on tp 4 at #:#"
        );
        assert_eq!(without_positions("no digits"), "no digits");
    }
}
