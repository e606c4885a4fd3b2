//! The verdict is about the change (docs/baseline.md): with a change, the base revision's tree
//! is validated too — exported from git objects and read by the same loader and checks — and
//! every finding is `new` or `unchanged` by a fingerprint that survives line shifts. Only new
//! errors fail; what the base already had is counted once.

use super::checks::ConfigChecked;
use super::inputs::Inputs;
use super::steps::ChangeMode;
use super::{CheckResult, Options, RunScope};
use infx_report::{BaselineState, Code, Diagnostic, SourceMap};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
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

/// Whether this run compares with a base at all: a change (not a clean clone's stand-in,
/// `--all`, or a tree outside git).
fn compares(inputs: &Inputs) -> bool {
    compares_in(&inputs.opts, &inputs.change)
}

fn compares_in(opts: &Options, change: &super::steps::ChangeInfo) -> bool {
    !(opts.all || opts.no_repository || change.mode != ChangeMode::Change)
}

/// The base's findings, worked out while the head's checks run on the second core: started
/// when the load itself already has findings (so the comparison will be needed)
/// (docs/baseline.md, "Cost").
pub(super) struct Early {
    /// How many paths the head's run had read when the base was exported: a check that read
    /// more would leave the export short, and the base is then validated again after all.
    read: usize,
    found: Result<Vec<String>, String>,
    elapsed: Duration,
}

/// Whether to start [`early`]: the run compares with a base and has findings before its
/// checks run (the config check's, which ran beside the load, or faults of reading).
pub(super) fn starts_early(inputs: &Inputs, config: &ConfigChecked) -> bool {
    compares(inputs)
        && inputs.read_log.is_some()
        && (!config.findings.is_empty()
            || !inputs.yaml.findings.is_empty()
            || !inputs.review_load_findings.is_empty()
            || !inputs.pin_policy.1.is_empty())
}

/// The base validated over the head's scope, every check run (the head's checks, which would
/// narrow them, are not done yet).
pub(super) fn early(inputs: &Inputs) -> Option<Early> {
    let started = Instant::now();
    let base = inputs.change.base.clone()?;
    let read = read_count(inputs);
    let scope = RunScope {
        files: base_files(inputs),
        touched: inputs.touched.clone(),
        reuse: None,
        checks: None,
    };
    Some(Early {
        read,
        found: base_findings(inputs, &base, scope),
        elapsed: started.elapsed(),
    })
}

/// Whether `INFX_BASELINE_TRACE` asks for the comparison's timings on stderr
/// (docs/baseline.md, "Cost").
fn traced() -> bool {
    std::env::var_os("INFX_BASELINE_TRACE").is_some()
}

fn read_count(inputs: &Inputs) -> usize {
    inputs.read_log.as_ref().map_or(0, infx_fs::ReadLog::len)
}

/// Gives every finding of `checks` its baseline state when the run has a change to compare
/// with. `sources` holds the texts the findings name (repository-relative paths); `early` is
/// the base's findings when they were worked out beside the checks. `None` when there is
/// nothing to compare: no change (a clean clone's stand-in, `--all`, outside git), or no
/// finding at all — then the base is not even read.
pub(super) fn compare(
    inputs: &Inputs,
    checks: &mut [CheckResult],
    sources: &SourceMap,
    early: Option<Early>,
) -> Option<Baseline> {
    let change = &inputs.change;
    if !compares(inputs) || checks.iter().all(|c| c.diagnostics.is_empty()) {
        return None;
    }
    let started = Instant::now();
    let base = change.base.clone()?;
    let mut outcome = Baseline {
        base: base.get(..12).unwrap_or(&base).to_string(),
        ..Baseline::default()
    };
    let early = early.filter(|e| e.read == read_count(inputs));
    let spent_early = early.as_ref().map_or(Duration::ZERO, |e| e.elapsed);
    let found = match early {
        Some(e) => e.found,
        None => {
            let scope = RunScope {
                files: base_files(inputs),
                touched: inputs.touched.clone(),
                reuse: None,
                checks: Some(
                    checks
                        .iter()
                        .filter(|c| !c.diagnostics.is_empty())
                        .map(|c| c.name)
                        .collect(),
                ),
            };
            base_findings(inputs, &base, scope)
        }
    };
    let base_findings = match found {
        Ok(found) => found,
        Err(why) => {
            outcome.not_compared = Some(why);
            outcome.elapsed = started.elapsed() + spent_early;
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
    if traced() {
        eprintln!(
            "baseline: total {:?}, matching {:?}",
            started.elapsed(),
            compared.elapsed()
        );
    }
    // The time the comparison took, beside the checks or after them.
    outcome.elapsed = started.elapsed() + spent_early;
    Some(outcome)
}

/// The base's findings as fingerprints: its tree exported from git objects into a temporary
/// folder outside any repository, validated by the same load and checks over the head's scope.
fn base_findings(inputs: &Inputs, base: &str, mut scope: RunScope) -> Result<Vec<String>, String> {
    let (change, root) = (&inputs.change, inputs.root.as_path());
    let repo_root = infx_fs::canonical(change.repo_root.as_deref().ok_or("no repository")?)
        .map_err(|e| format!("the repository cannot be resolved: {e}"))?;
    let tree_rel = root
        .strip_prefix(&repo_root)
        .map_err(|_| "the tree is not inside its repository".to_string())?;
    let started = Instant::now();
    let tmp = export_dir().map_err(|e| format!("no temporary folder for the base: {e}"))?;
    let export = tmp.path().join("repo");
    let base_root = export.join(tree_rel);
    let subdir = tree_rel.to_string_lossy().replace('\\', "/");
    let head = HeadParses::of(inputs);
    change
        .with_base(|repo, commit| export_base(repo, commit, &subdir, &export, &base_root, &head))
        .ok_or_else(|| format!("the base {base} cannot be read"))??;
    scope.reuse = Some(Arc::new(head.reuse(&base_root)));
    if traced() {
        let same: Vec<String> = head.same.borrow().iter().map(|(r, _)| r.clone()).collect();
        eprintln!("baseline: head parses reused {same:?}");
        let read = head.read.as_ref().map(HashSet::len);
        eprintln!("baseline: read by the head {read:?}");
    }
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
    if traced() {
        eprintln!(
            "baseline: export {:?}, checks {:?}\n{}",
            exported.duration_since(started),
            exported.elapsed(),
            super::summary_text(&report)
        );
    }
    let sources = &report.sources.0;
    // A file the change moved is matched at the path the change gives it.
    let moved: HashMap<PathBuf, PathBuf> = renames(change).into_iter().collect();
    Ok(report
        .checks
        .iter()
        .flat_map(|c| &c.diagnostics)
        .map(|d| {
            let at = d.path.as_ref().and_then(|p| moved.get(p));
            fingerprint_at(d, sources, at.map(PathBuf::as_path))
        })
        .collect())
}

/// The files the change moved (a rename or copy to another path).
fn moves(change: &super::steps::ChangeInfo) -> impl Iterator<Item = &infx_diff::ChangedFile> {
    let files = match &change.loaded {
        Some(Ok(c)) => &c.set.files[..],
        _ => &[],
    };
    files
        .iter()
        .filter(|f| f.old_path.as_ref().is_some_and(|old| *old != f.path))
}

/// The files the change moved: (old, new), repository-relative.
fn renames(change: &super::steps::ChangeInfo) -> Vec<(PathBuf, PathBuf)> {
    moves(change)
        .filter_map(|f| Some((f.old_path.clone()?, f.path.clone())))
        .collect()
}

/// A repository-relative path relative to the tree, when it lies in the tree.
fn in_tree(inputs: &Inputs, repo_path: &Path) -> Option<PathBuf> {
    let repo_root = inputs.change.repo_root.as_ref()?;
    let p = repo_root.join(repo_path);
    p.strip_prefix(&inputs.root).ok().map(Path::to_path_buf)
}

/// The exact renames of the change inside the tree, as tree-relative `(old, new)` paths with
/// `/` separators, and the old path as the repository names it: the file's bytes did not
/// change (`ChangedFile::same_content`).
fn exact_renames(inputs: &Inputs) -> Vec<(String, String, &Path)> {
    let rel = |p: &Path| Some(in_tree(inputs, p)?.to_string_lossy().replace('\\', "/"));
    moves(&inputs.change)
        .filter(|f| f.same_content)
        .filter_map(|f| {
            let old = f.old_path.as_deref()?;
            Some((rel(old)?, rel(&f.path)?, old))
        })
        .collect()
}

/// The files the base's run parses, relative to the tree: those the head's run parsed, under
/// their base names where the change moved them (docs/baseline.md, "Scope").
fn base_files(inputs: &Inputs) -> Vec<PathBuf> {
    let mut files = head_files(inputs);
    for f in moves(&inputs.change) {
        let old = f.old_path.as_deref().and_then(|p| in_tree(inputs, p));
        if let (Some(old), Some(new)) = (old, in_tree(inputs, &f.path))
            && files.binary_search(&new).is_ok()
        {
            files.push(old);
        }
    }
    files.sort();
    files.dedup();
    files
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
    use infx_config::layout::{Role, role};
    match role(Path::new(path)) {
        // The changelog's findings are about the change (append-only against the base), so
        // the base's own is not read: its parse is the base run's largest (a 395 KB file
        // upstream).
        Role::Changelog => false,
        Role::Golden => true,
        _ => {
            path.ends_with(".yaml")
                || path.ends_with(".yml")
                || path
                    .strip_prefix(infx_config::layout::WAIVERS_DIR)
                    .is_some_and(|rest| rest.starts_with('/'))
                || path.ends_with("CODEOWNERS")
        }
    }
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

/// One base parse for [`parse_ahead`]: the file's tree-relative path, its base bytes (the blob
/// the change read) and the head's document, whose unchanged sections the parse takes over.
pub(super) type AheadJob = (String, Vec<u8>, infx_yaml::Document);

/// The large config files the change modified in place, in a run that compares with a base:
/// the files [`HeadParses::note`] would offer the base's run by their unchanged sections (large,
/// parsed without findings), with what [`parse_ahead`] needs, owned.
pub(super) fn ahead_jobs(
    opts: &Options,
    change: &super::steps::ChangeInfo,
    root: &Path,
    configs: &infx_config::LoadedConfigs,
    yaml_findings: &[Diagnostic],
) -> Vec<AheadJob> {
    if !compares_in(opts, change) || change.base.is_none() {
        return Vec::new();
    }
    let with_findings: HashSet<&Path> = yaml_findings
        .iter()
        .filter_map(|d| d.path.as_deref())
        .collect();
    configs
        .masters
        .iter()
        .chain(&configs.runners)
        .filter(|doc| offers_sections(doc, with_findings.contains(doc.path.as_path())))
        .filter_map(|doc| {
            let blob = change.base_blob_of_modified(&doc.path)?;
            let rel = doc.path.strip_prefix(root).ok()?;
            Some((
                rel.to_string_lossy().replace('\\', "/"),
                blob.to_vec(),
                doc.clone(),
            ))
        })
        .collect()
}

/// The base's parses of `jobs` ([`ahead_jobs`]), made while the head's load goes on, on the
/// second core: the parse the base's run would otherwise make from the head's sections, on
/// the critical path (docs/performance.md, "Session 42: where the one-config change stands").
/// Only clean parses (no findings), whose document is all a reader takes.
pub(super) fn parse_ahead(jobs: Vec<AheadJob>) -> Vec<(String, infx_yaml::Document)> {
    jobs.into_iter()
        .filter_map(|(rel, blob, head)| {
            let path = head.path.clone();
            let loaded = infx_yaml::load_bytes_with_previous(&path, blob, head);
            let base = loaded.document.filter(|_| loaded.findings.is_empty())?;
            Some((rel, base))
        })
        .collect()
}

/// The head's parsed documents by tree-relative path, and which of them the base has with the
/// same bytes (found while the base is exported): the base's run takes those parses instead of
/// parsing the file again (docs/baseline.md, "Cost").
struct HeadParses<'a> {
    /// The tree-relative paths the head's run read (`None`: not logged, export everything).
    read: Option<infx_fs::ReadPaths>,
    changed_paths: HashSet<PathBuf>,
    docs: HashMap<String, &'a infx_yaml::Document>,
    /// The head's documents of the files an exact rename moved, by their base path, with the
    /// base's bytes there (the change read the one blob for both sides).
    moved: HashMap<String, (&'a infx_yaml::Document, Arc<[u8]>)>,
    same: std::cell::RefCell<Vec<(String, &'a infx_yaml::Document)>>,
    /// Large files the base has with other bytes: their unchanged sections are taken over.
    changed: std::cell::RefCell<Vec<(String, &'a infx_yaml::Document)>>,
    /// The base's parses the load made ahead of the base's run ([`parse_ahead`]), by path,
    /// and those the export confirmed (the base's blob there is as long as the parsed text).
    ahead: HashMap<&'a str, &'a infx_yaml::Document>,
    ahead_used: std::cell::RefCell<Vec<(String, &'a infx_yaml::Document)>>,
    /// The yaml step's findings by file: looked up per reused parse, not scanned (a tree-wide
    /// move reuses thousands; docs/performance.md, "Renames").
    findings: HashMap<&'a Path, Vec<&'a Diagnostic>>,
}

/// Whether the head's parse of a changed file is worth its unchanged sections to the base's
/// run: a large file ([`SECTIONS_FROM`]) that parsed without findings (a section taken over
/// brings no findings along, so a file with parse findings is parsed whole).
fn offers_sections(doc: &infx_yaml::Document, parsed_with_findings: bool) -> bool {
    doc.text.len() >= SECTIONS_FROM && !parsed_with_findings
}

/// From this size a changed file's parse is offered for its unchanged sections: below it a
/// whole parse costs about what the comparison of sections does.
const SECTIONS_FROM: usize = 16 * 1024;

impl<'a> HeadParses<'a> {
    /// The tree-relative paths the base's run may read, sorted (`None`: every file validate
    /// could read): those the head's run read, and those the change touched (deleted and
    /// renamed-away paths are in the change too). The rest the head's run did not read, so the
    /// base's (the same code over the same scope) does not either.
    fn needed(&self) -> Option<Vec<String>> {
        let read = self.read.as_ref()?;
        let mut paths: Vec<String> = read
            .iter()
            .chain(&self.changed_paths)
            .filter_map(|p| p.to_str())
            .filter(|p| read_by_validate(p))
            .map(str::to_string)
            .collect();
        paths.sort();
        paths.dedup();
        Some(paths)
    }

    fn of(inputs: &'a Inputs) -> HeadParses<'a> {
        let docs: HashMap<String, &infx_yaml::Document> = inputs
            .documents()
            .filter_map(|d| {
                let rel = d.path.strip_prefix(&inputs.root).ok()?;
                Some((rel.to_string_lossy().replace('\\', "/"), d))
            })
            .collect();
        let mut findings: HashMap<&Path, Vec<&Diagnostic>> = HashMap::new();
        for d in &inputs.yaml.findings {
            if let Some(p) = &d.path {
                findings.entry(p.as_path()).or_default().push(d);
            }
        }
        let moved = exact_renames(inputs)
            .into_iter()
            .filter_map(|(old, new, old_path)| {
                let base = inputs.change.moved_from(old_path)?.old.clone();
                Some((old, (*docs.get(&new)?, base)))
            })
            .collect();
        HeadParses {
            read: inputs.read_log.as_ref().map(infx_fs::ReadLog::paths),
            changed_paths: inputs
                .change
                .paths_under(&inputs.root)
                .into_iter()
                .collect(),
            docs,
            moved,
            same: Default::default(),
            changed: Default::default(),
            ahead: inputs
                .base_parses
                .iter()
                .map(|(rel, doc)| (rel.as_str(), doc))
                .collect(),
            ahead_used: Default::default(),
            findings,
        }
    }

    /// Notes the base's blob at `rel` (`size` reads its size): the same bytes as the head's
    /// parsed file there (the change does not list the path, and the decoded text is as long as
    /// the blob, so a byte order mark or a line-ending filter leaves it out), or a large file
    /// that changed. Hands back the blob's bytes when they are held: a moved file's from the
    /// change, an unchanged file's as the head's text. The export writes them instead of
    /// reading the blob again.
    fn note(&self, rel: &str, size: &dyn Fn() -> Option<u64>) -> Option<Arc<[u8]>> {
        // A file an exact rename moved away: the head parsed its bytes at the new path (a
        // tree-wide move would otherwise parse every moved file twice; docs/baseline.md, "Cost").
        if let Some((doc, bytes)) = self.moved.get(rel) {
            if bytes.len() == doc.text.len() {
                self.same.borrow_mut().push((rel.to_string(), doc));
            }
            return Some(bytes.clone());
        }
        // The base's parse, made while the head's load ran: its text is the base's blob when
        // as long (decoding drops only a byte order mark).
        if let Some(base) = self.ahead.get(rel)
            && size() == Some(base.text.len() as u64)
        {
            self.ahead_used.borrow_mut().push((rel.to_string(), base));
            return Some(Arc::<[u8]>::from(base.text.clone()));
        }
        let doc = self.docs.get(rel)?;
        let same_bytes = || size() == Some(doc.text.len() as u64);
        if !self.changed_paths.contains(Path::new(rel)) && same_bytes() {
            self.same.borrow_mut().push((rel.to_string(), doc));
            return Some(Arc::<[u8]>::from(doc.text.clone()));
        }
        if offers_sections(doc, self.parse_findings(doc).next().is_some()) {
            self.changed.borrow_mut().push((rel.to_string(), doc));
        }
        None
    }

    /// The yaml step's findings on `doc`'s file (its parse's).
    fn parse_findings<'d>(
        &'d self,
        doc: &'d infx_yaml::Document,
    ) -> impl Iterator<Item = &'d Diagnostic> + 'd {
        self.findings
            .get(doc.path.as_path())
            .into_iter()
            .flatten()
            .copied()
    }

    /// The head's parses of the files the base has unchanged, offered at their base paths:
    /// each document with the parse findings of its file.
    fn reuse(&self, base_root: &Path) -> infx_yaml::Reuse {
        let reuse = infx_yaml::Reuse::default();
        for (rel, doc) in self.same.borrow().iter() {
            let findings = self.parse_findings(doc).cloned().collect();
            let loaded = infx_yaml::Loaded {
                document: Some((*doc).clone()),
                findings,
                text: Some(doc.text.clone()),
            };
            reuse.offer(&base_root.join(rel), loaded);
        }
        for (rel, doc) in self.changed.borrow().iter() {
            reuse.offer_previous(&base_root.join(rel), (*doc).clone());
        }
        for (rel, base) in self.ahead_used.borrow().iter() {
            let loaded = infx_yaml::Loaded {
                document: Some((*base).clone()),
                findings: Vec::new(),
                text: Some(base.text.clone()),
            };
            reuse.offer_parsed(&base_root.join(rel), loaded);
        }
        reuse
    }
}

/// Writes the base's tree below `base_root` (and, for a nested tree, the repository's
/// CODEOWNERS below `export`, where the review checks look for it).
fn export_base(
    repo: &infx_git::Repo,
    commit: infx_git::Oid,
    subdir: &str,
    export: &Path,
    base_root: &Path,
    head: &HeadParses<'_>,
) -> Result<(), String> {
    std::fs::create_dir_all(base_root).map_err(|e| format!("cannot export the base: {e}"))?;
    let exported = match head.needed() {
        // What the head's run read and what the change touched: looked up one by one.
        Some(paths) => {
            let known =
                |rel: &str, _: infx_git::Oid, size: &dyn Fn() -> Option<u64>| head.note(rel, size);
            let paths = paths.iter().map(String::as_str);
            repo.export_paths(commit, subdir, base_root, MAX_BLOB, paths, &known)
        }
        None => {
            let keep = |rel: &str, id: infx_git::Oid| {
                let keep = read_by_validate(rel);
                if keep {
                    head.note(rel, &|| repo.blob_size(id));
                }
                keep
            };
            repo.export_tree(commit, subdir, base_root, MAX_BLOB, &keep)
        }
    };
    exported.map_err(|e| format!("cannot export the base: {}", e.message))?;
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

/// Each file's added lines by repository-relative path, borrowed from the change (a set per
/// file cost a large change 2 KiB per added file; docs/performance.md, "Memory per added
/// file"), and whether they ascend (a diff's do; a list that does not is searched whole).
fn added_lines(change: &super::steps::ChangeInfo) -> HashMap<&Path, (&[usize], bool)> {
    let mut out = HashMap::new();
    if let Some(Ok(c)) = &change.loaded {
        for t in &c.texts {
            out.insert(t.path.as_path(), (t.added.as_slice(), t.added.is_sorted()));
        }
    }
    out
}

fn on_added_line(d: &Diagnostic, added: &HashMap<&Path, (&[usize], bool)>) -> bool {
    let (Some(p), Some(s)) = (&d.path, d.span) else {
        return false;
    };
    let line = s.start.line();
    added.get(p.as_path()).is_some_and(|(lines, ascending)| {
        if *ascending {
            lines.binary_search(&line).is_ok()
        } else {
            lines.contains(&line)
        }
    })
}

/// What identifies a finding across revisions: its code, file, message without positions and
/// the text of the line it points at (trimmed), so that lines inserted above it keep it the
/// same finding (docs/baseline.md, "Fingerprint").
pub(crate) fn fingerprint(d: &Diagnostic, sources: &SourceMap) -> String {
    fingerprint_at(d, sources, None)
}

/// [`fingerprint`], naming the file `at` instead of its own path (a file the change moved).
fn fingerprint_at(d: &Diagnostic, sources: &SourceMap, at: Option<&Path>) -> String {
    let path = at
        .or(d.path.as_deref())
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
    let hex = infx_image::Digest::sha256_of(key.as_bytes()).encoded;
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
