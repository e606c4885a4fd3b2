//! Loading the change set from git (the only I/O in this crate): the base, the changed paths
//! with renames, and the old/new texts the whitespace check needs.

use crate::codes;
use crate::ws::{self, WsAttr, WsRule};
use git2::{
    AttrCheckFlags, AttrValue, Delta, DiffFindOptions, DiffOptions, ErrorCode, Oid, Repository,
};
use infx_git::{BaseError, Repo};
use infx_report::Diagnostic;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use infx_git::{BaseSource, DEFAULT_UPSTREAMS, EMPTY_TREE};

/// Diffs computed by [`changed_files`] and [`load_change`] in this process, for the test that
/// `validate` diffs a change once (docs/diff.md, "One load").
static DIFFS_COMPUTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many change diffs this process has computed so far.
pub fn diffs_computed() -> usize {
    DIFFS_COMPUTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Git's default `core.bigFileThreshold` (files above it are treated as binary).
const BIG_FILE_THRESHOLD: u64 = 512 * 1024 * 1024;

/// What to compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeOptions {
    /// Base revision. `None`: the merge-base of HEAD with the first of `upstreams` that exists.
    /// `REV...` means the merge-base of HEAD with REV; [`EMPTY_TREE`] means "no base".
    pub base: Option<String>,
    /// Upstream candidates for the default base, in order.
    pub upstreams: Vec<String>,
    /// The new side: the working tree (default) or a revision.
    pub target: Target,
    /// Count untracked, not ignored files as added (working-tree target only).
    pub untracked: bool,
}

impl Default for ChangeOptions {
    fn default() -> Self {
        ChangeOptions {
            base: None,
            upstreams: DEFAULT_UPSTREAMS.iter().map(|s| s.to_string()).collect(),
            target: Target::WorkTree,
            untracked: true,
        }
    }
}

impl ChangeOptions {
    /// Exactly what `git diff --check [<base>]` looks at: tracked files, base → working tree.
    pub fn git_diff_check(base: Option<&str>) -> Self {
        ChangeOptions {
            base: base.map(str::to_string),
            untracked: false,
            ..Self::default()
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Committed history up to HEAD plus staged and unstaged changes (the usual case).
    WorkTree,
    /// A revision (e.g. a commit found by [`last_commit_touching`]).
    Rev(String),
}

/// The resolved base of a change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Base {
    /// The commit id (hex); `None` for the empty tree.
    pub commit: Option<String>,
    pub source: BaseSource,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Added,
    Modified,
    Deleted,
    Renamed,
    Copied,
    /// File ↔ symlink (or similar) change.
    TypeChanged,
    /// Not tracked and not ignored (only with `untracked: true`).
    Untracked,
    /// Unmerged in the index (a merge or rebase in progress).
    Conflicted,
}

/// One changed path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedFile {
    pub status: Status,
    /// Path relative to the repository root: the new path (the old one for deletions).
    pub path: PathBuf,
    /// The path before a rename or copy.
    pub old_path: Option<PathBuf>,
    /// A rename or copy whose bytes did not change: the old and the new blob ids agree (an
    /// exact rename). A reader of the base may take the new file's parse for the old path.
    pub same_content: bool,
}

/// Every changed path between the base and the target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeSet {
    /// The repository's working directory (or git dir for a bare repository).
    pub root: PathBuf,
    pub base: Base,
    /// HEAD's commit id, `None` on an unborn branch.
    pub head: Option<String>,
    pub files: Vec<ChangedFile>,
}

impl ChangeSet {
    /// "No change": e.g. a fresh clone of main with a clean working tree. Callers then fall
    /// back to [`last_commit_touching`].
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
    pub fn contains(&self, path: &Path) -> bool {
        self.files.iter().any(|f| f.path == path)
    }
}

/// Old and new text of one changed text file, with the rules git applies to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileText {
    /// New path, relative to the repository root.
    pub path: PathBuf,
    /// Shared with `new` when the two are one blob (an exact rename).
    pub old: Arc<[u8]>,
    /// Shared: the review's added lines point into it (docs/performance.md, "Memory per
    /// added file").
    pub new: Arc<[u8]>,
    pub rule: WsRule,
    pub marker_size: usize,
    /// 1-based numbers of the new text's added lines, in order, as git's xdiff classifies them.
    pub added: Vec<usize>,
}

impl FileText {
    /// A file text whose added lines are computed here (libgit2's xdiff, Myers without the
    /// indent heuristic — what git's `--check` runs).
    pub fn new(
        path: impl Into<PathBuf>,
        old: Vec<u8>,
        new: Vec<u8>,
        rule: WsRule,
        marker_size: usize,
    ) -> Result<FileText, Diagnostic> {
        let path = path.into();
        let added = added_between(&path, &old, &new)?;
        Ok(FileText::from_texts(
            path,
            rule,
            marker_size,
            (old.into(), new.into(), added),
        ))
    }

    /// A file text whose added lines the caller already has (a whole-file patch's line
    /// classification, or its own xdiff run): `(old, new, added)`.
    fn from_texts(
        path: PathBuf,
        rule: WsRule,
        marker_size: usize,
        (old, new, added): (Arc<[u8]>, Arc<[u8]>, Vec<usize>),
    ) -> FileText {
        FileText {
            path,
            old,
            new,
            rule,
            marker_size,
            added,
        }
    }
}

/// The 1-based numbers of `new`'s lines that git's xdiff counts as added against `old`.
fn added_between(path: &Path, old: &[u8], new: &[u8]) -> Result<Vec<usize>, Diagnostic> {
    if let Some(added) = infx_git::shortcut_added_lines(old, new) {
        return Ok(added);
    }
    let mut opts = added_line_options();
    let patch = git2::Patch::from_buffers(old, None, new, None, Some(&mut opts))
        .map_err(|e| git_err(&e).with_path(path))?;
    added_lines(&patch).map_err(|e| git_err(&e).with_path(path))
}

/// [`added_between`] with the old text a blob.
fn added_against_blob(
    path: &Path,
    old: &git2::Blob<'_>,
    new: &[u8],
) -> Result<Vec<usize>, Diagnostic> {
    if let Some(added) = infx_git::shortcut_added_lines(old.content(), new) {
        return Ok(added);
    }
    let mut opts = added_line_options();
    let patch = git2::Patch::from_blob_and_buffer(old, None, new, None, Some(&mut opts))
        .map_err(|e| git_err(&e).with_path(path))?;
    added_lines(&patch).map_err(|e| git_err(&e).with_path(path))
}

/// The options of a patch read only for its added lines (text whatever the bytes, no context).
fn added_line_options() -> DiffOptions {
    let mut opts = DiffOptions::new();
    opts.force_text(true).context_lines(0).interhunk_lines(0);
    opts
}

fn added_lines(patch: &git2::Patch<'_>) -> Result<Vec<usize>, git2::Error> {
    let mut added = Vec::new();
    for h in 0..patch.num_hunks() {
        for l in 0..patch.num_lines_in_hunk(h)? {
            let line = patch.line_in_hunk(h, l)?;
            if line.origin() == '+'
                && let Some(n) = line.new_lineno()
            {
                added.push(n as usize);
            }
        }
    }
    Ok(added)
}

/// A change set with the texts to check (binary files, deletions and submodules left out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub set: ChangeSet,
    pub texts: Vec<FileText>,
    /// Changed files skipped as binary (git's rules: `diff` attribute, NUL in the first 8000 bytes).
    pub binary: Vec<PathBuf>,
}

fn git_err(e: &git2::Error) -> Diagnostic {
    Diagnostic::error(codes::GIT, format!("git: {}", e.message()))
}

/// Opens the repository containing `repo` (any directory inside it), worded as this crate's
/// finding.
pub fn open_repository(repo: &Path) -> Result<Repo, Diagnostic> {
    Repo::discover_git2(repo).map_err(|e| {
        Diagnostic::error(
            codes::NOT_A_REPO,
            format!("{} is not inside a git repository", repo.display()),
        )
        .with_help("run it inside a clone, or pass --repo <dir of a clone>")
        .with_note(e.message().to_string())
    })
}

fn shallow_help(what: &str) -> Diagnostic {
    BaseError::shallow(what).to_diagnostic()
}

struct Resolved<'r> {
    base: Base,
    tree: Option<git2::Tree<'r>>,
    head: Option<git2::Commit<'r>>,
    /// The tree of a [`Target::Rev`].
    target: Option<git2::Tree<'r>>,
}

fn head_commit(repo: &Repository) -> Result<Option<git2::Commit<'_>>, Diagnostic> {
    match repo.head() {
        Ok(r) => r.peel_to_commit().map(Some).map_err(|e| git_err(&e)),
        Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok(None),
        Err(e) => Err(git_err(&e)),
    }
}

/// The base through infx-git's one resolution (docs/diff.md, "Base"), with the trees and
/// commits the diff needs.
fn resolve<'r>(repo: &'r Repo, opts: &ChangeOptions) -> Result<Resolved<'r>, Diagnostic> {
    let git = repo.git2();
    let head = head_commit(git)?;
    let resolved = repo.resolve_change_base(
        opts.base.as_deref(),
        &opts.upstreams,
        head.as_ref().map(|c| c.id()),
    )?;
    let tree = match resolved.tree {
        Some(id) => Some(git.find_tree(id).map_err(|e| git_err(&e))?),
        None => None,
    };
    let target = match &opts.target {
        Target::WorkTree => None,
        Target::Rev(spec) => Some(
            repo.find_base_rev(spec)?
                .peel_to_tree()
                .map_err(|e| git_err(&e))?,
        ),
    };
    Ok(Resolved {
        base: Base {
            commit: resolved.commit.map(|c| c.to_string()),
            source: resolved.source,
        },
        tree,
        head,
        target,
    })
}

fn root_of(repo: &Repository) -> PathBuf {
    repo.workdir().unwrap_or_else(|| repo.path()).to_path_buf()
}

fn status_of(d: Delta) -> Option<Status> {
    Some(match d {
        Delta::Added => Status::Added,
        Delta::Modified => Status::Modified,
        Delta::Deleted => Status::Deleted,
        Delta::Renamed => Status::Renamed,
        Delta::Copied => Status::Copied,
        Delta::Typechange => Status::TypeChanged,
        Delta::Untracked => Status::Untracked,
        Delta::Conflicted => Status::Conflicted,
        Delta::Unmodified | Delta::Ignored | Delta::Unreadable => return None,
    })
}

/// Rename detection as `git diff` does it by default (`diff.renames`: true, false or copies).
/// With the options, whether copies are looked for too.
fn find_options(repo: &Repository, untracked: bool) -> Option<(DiffFindOptions, bool)> {
    let cfg = repo.config().ok()?.snapshot().ok()?;
    let (renames, copies) = match cfg.get_bool("diff.renames") {
        Ok(false) => return None,
        Ok(true) => (true, false),
        Err(_) => match cfg.get_string("diff.renames").ok().as_deref() {
            Some("copies" | "copy") => (true, true),
            _ => (true, false),
        },
    };
    let mut f = DiffFindOptions::new();
    f.renames(renames).copies(copies).for_untracked(untracked);
    Some((f, copies))
}

// Enough context that one hunk spans the whole file, so the patch carries both full texts
// (after git's clean filters, e.g. CRLF conversion, which only libgit2's workdir diff applies).
const WHOLE_FILE_CONTEXT: u32 = 1 << 30;

/// The options of every diff of the change: type changes and submodules shown, untracked
/// files with their content when asked, and with `whole_files` one hunk per file.
fn diff_options(untracked: bool, whole_files: bool) -> DiffOptions {
    let mut o = DiffOptions::new();
    o.include_typechange(true)
        .ignore_submodules(false)
        .include_untracked(untracked)
        .recurse_untracked_dirs(untracked)
        .show_untracked_content(untracked);
    if whole_files {
        o.force_text(true)
            .context_lines(WHOLE_FILE_CONTEXT)
            .interhunk_lines(0);
    }
    o
}

/// The change's deltas after rename detection: libgit2's diffs (the whole change, and the
/// similarity pass's part) and the rows read from them, in libgit2's order.
struct ChangeDiff<'r> {
    diffs: Vec<git2::Diff<'r>>,
    rows: Vec<Row>,
}

/// One delta of a [`ChangeDiff`].
#[derive(Clone, Debug, PartialEq, Eq)]
struct Row {
    status: Delta,
    old_path: Option<PathBuf>,
    new_path: Option<PathBuf>,
    old_id: Oid,
    new_id: Oid,
    old_mode: u32,
    new_mode: u32,
    /// Where the whole-file patch of this delta is: `(diff, delta index)`; `None` for an exact
    /// rename paired here, whose old and new texts are its one blob.
    patch: Option<(usize, usize)>,
}

impl Row {
    fn read(delta: &git2::DiffDelta<'_>, patch: (usize, usize)) -> Row {
        let (old, new) = (delta.old_file(), delta.new_file());
        Row {
            status: delta.status(),
            old_path: old.path().map(Path::to_path_buf),
            new_path: new.path().map(Path::to_path_buf),
            old_id: old.id(),
            new_id: new.id(),
            old_mode: u32::from(old.mode()),
            new_mode: u32::from(new.mode()),
            patch: Some(patch),
        }
    }

    /// The path libgit2 sorts the delta by (`diff_delta__path`): the new one for an addition,
    /// rename or copy, else the old one.
    fn sort_path(&self) -> Option<&Path> {
        match self.status {
            Delta::Added | Delta::Renamed | Delta::Copied => self.new_path.as_deref(),
            _ => self.old_path.as_deref().or(self.new_path.as_deref()),
        }
    }
}

/// A regular file's mode (100644 or 100755): what libgit2's similarity pass considers.
fn is_blob_mode(mode: u32) -> bool {
    mode & 0o170000 == 0o100000
}

fn rows_of(diff: &git2::Diff<'_>, which: usize) -> Vec<Row> {
    diff.deltas()
        .enumerate()
        .map(|(idx, d)| Row::read(&d, (which, idx)))
        .collect()
}

/// The change's diff with renames found as `diff.renames` says: exact ones by blob id first
/// ([`pair_exact_renames`]), then libgit2's similarity pass over what is left.
fn build_diff<'r>(
    repo: &'r Repository,
    resolved: &Resolved<'r>,
    opts: &ChangeOptions,
    whole_files: bool,
) -> Result<ChangeDiff<'r>, Diagnostic> {
    let untracked = opts.untracked && opts.target == Target::WorkTree;
    if opts.target == Target::WorkTree && repo.is_bare() {
        return Err(Diagnostic::error(
            codes::BARE_REPO,
            "a bare repository has no working tree to check",
        )
        .with_help("pass a revision to compare instead, or run in a clone with a working tree"));
    }
    DIFFS_COMPUTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut diff = raw_diff(repo, resolved, opts, whole_files, None)?;
    let find = find_options(repo, untracked);
    let Some((mut f, copies)) = find else {
        let rows = rows_of(&diff, 0);
        return Ok(ChangeDiff {
            diffs: vec![diff],
            rows,
        });
    };
    let mut rows = rows_of(&diff, 0);
    // Copies take any changed file as a source, exact or not: libgit2 judges the whole diff.
    let paired = if copies {
        0
    } else {
        pair_exact_renames(&mut rows, untracked)
    };
    if paired == 0 {
        diff.find_similar(Some(&mut f)).map_err(|e| git_err(&e))?;
        let rows = rows_of(&diff, 0);
        return Ok(ChangeDiff {
            diffs: vec![diff],
            rows,
        });
    }
    // The similarity pass runs only on what the exact pass left, as git's does (docs/diff.md,
    // "Renames"): a second diff limited to those paths.
    let Some(rest) = similarity_candidates(&rows, untracked) else {
        return Ok(ChangeDiff {
            diffs: vec![diff],
            rows,
        });
    };
    let mut second = raw_diff(repo, resolved, opts, whole_files, Some(rest.clone()))?;
    second.find_similar(Some(&mut f)).map_err(|e| git_err(&e))?;
    let found = rows_of(&second, 1);
    match splice(rows, &rest, found) {
        Some(rows) => Ok(ChangeDiff {
            diffs: vec![diff, second],
            rows,
        }),
        // Not modelled: one libgit2 pass over everything, as before.
        None => {
            diff.find_similar(Some(&mut f)).map_err(|e| git_err(&e))?;
            let rows = rows_of(&diff, 0);
            Ok(ChangeDiff {
                diffs: vec![diff],
                rows,
            })
        }
    }
}

/// Pairs deleted and added regular files with the same blob id as renames, in place, the way
/// git's exact pass does (`find_exact_renames` in diffcore-rename.c): destinations in path
/// order, each taking among the unused sources with its id (in path order) the first with the
/// same file name, else the first, looking at no more than 100 of them. The source's row is
/// dropped and the destination's becomes the rename, where libgit2 would put it (its sort key
/// is the new path). Returns how many were paired.
fn pair_exact_renames(rows: &mut Vec<Row>, untracked: bool) -> usize {
    let is_source =
        |r: &Row| r.status == Delta::Deleted && is_blob_mode(r.old_mode) && !r.old_id.is_zero();
    let is_target = |r: &Row| {
        (r.status == Delta::Added || (untracked && r.status == Delta::Untracked))
            && is_blob_mode(r.new_mode)
            && !r.new_id.is_zero()
    };
    let mut sources: std::collections::HashMap<Oid, Vec<usize>> = Default::default();
    for (i, r) in rows.iter().enumerate() {
        if is_source(r) {
            sources.entry(r.old_id).or_default().push(i);
        }
    }
    if sources.is_empty() {
        return 0;
    }
    let mut used = vec![false; rows.len()];
    let mut pairs = Vec::new();
    for (t, r) in rows.iter().enumerate() {
        if !is_target(r) {
            continue;
        }
        let Some(candidates) = sources.get(&r.new_id) else {
            continue;
        };
        let name = r.new_path.as_deref().and_then(Path::file_name);
        let mut best: Option<usize> = None;
        for &s in candidates.iter().filter(|&&s| !used[s]).take(100) {
            let same_name = rows[s].old_path.as_deref().and_then(Path::file_name) == name;
            if best.is_none() {
                best = Some(s);
            }
            if same_name {
                best = Some(s);
                break;
            }
        }
        if let Some(s) = best {
            used[s] = true;
            pairs.push((s, t));
        }
    }
    for &(s, t) in &pairs {
        let (old_path, old_id, old_mode) = {
            let src = &rows[s];
            (src.old_path.clone(), src.old_id, src.old_mode)
        };
        let tgt = &mut rows[t];
        tgt.status = Delta::Renamed;
        tgt.old_path = old_path;
        tgt.old_id = old_id;
        tgt.old_mode = old_mode;
        tgt.patch = None;
    }
    let mut i = 0;
    rows.retain(|_| {
        let keep = !used[i];
        i += 1;
        keep
    });
    pairs.len()
}

/// The paths of the rows libgit2's similarity pass may pair (`is_rename_source` and
/// `is_rename_target` for renames without copies or rewrites), when there are sources and
/// targets both; `None` when the pass would find nothing.
fn similarity_candidates(rows: &[Row], untracked: bool) -> Option<Vec<Vec<u8>>> {
    let source = |r: &Row| {
        matches!(r.status, Delta::Deleted | Delta::Typechange) && is_blob_mode(r.old_mode)
    };
    let target = |r: &Row| {
        (matches!(
            r.status,
            Delta::Added | Delta::Typechange | Delta::Unreadable
        ) || (untracked && r.status == Delta::Untracked))
            && is_blob_mode(r.new_mode)
    };
    if !rows.iter().any(source) || !rows.iter().any(target) {
        return None;
    }
    let mut paths: Vec<Vec<u8>> = rows
        .iter()
        .filter(|r| source(r) || target(r))
        .filter_map(|r| r.sort_path())
        .map(|p| p.as_os_str().as_encoded_bytes().to_vec())
        .collect();
    paths.dedup();
    Some(paths)
}

/// `rows` with the rows at the `rest` paths replaced by `found` (the similarity pass's rows for
/// those paths, in libgit2's order): each found row goes where the first row with its sort
/// path was, so the order is the one a libgit2 pass over everything would give. `None` when a
/// found row is not at one of those paths.
fn splice(rows: Vec<Row>, rest: &[Vec<u8>], found: Vec<Row>) -> Option<Vec<Row>> {
    let key = |r: &Row| {
        r.sort_path()
            .map(|p| p.as_os_str().as_encoded_bytes().to_vec())
    };
    let rest: HashSet<&[u8]> = rest.iter().map(Vec::as_slice).collect();
    let mut by_path: std::collections::HashMap<Vec<u8>, Vec<Row>> = Default::default();
    let mut unplaced = Vec::new();
    for r in found {
        match key(&r) {
            Some(k) if rest.contains(k.as_slice()) => by_path.entry(k).or_default().push(r),
            _ => unplaced.push(r),
        }
    }
    // A limit names a directory's contents too: a row of another path came along (a file
    // that became a directory), and the pass may have paired it. Not spliced: `None`.
    if !unplaced.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        match key(&r) {
            Some(k) if rest.contains(k.as_slice()) => {
                out.extend(by_path.remove(&k).unwrap_or_default());
            }
            _ => out.push(r),
        }
    }
    Some(out)
}

/// The diff of the change without rename detection, limited to `only` (literal paths) when
/// given.
fn raw_diff<'r>(
    repo: &'r Repository,
    resolved: &Resolved<'r>,
    opts: &ChangeOptions,
    whole_files: bool,
    only: Option<Vec<Vec<u8>>>,
) -> Result<git2::Diff<'r>, Diagnostic> {
    let untracked = opts.untracked && opts.target == Target::WorkTree;
    // The working-tree diff is two diffs with the same options and different path limits.
    let options = || {
        let mut o = diff_options(untracked, whole_files);
        if let Some(only) = &only {
            limit_to(&mut o, only.clone());
        }
        o
    };
    match &opts.target {
        Target::WorkTree => {
            let scan = match &only {
                // Both halves limited to the paths, which already had a delta.
                Some(_) => None,
                None => worktree_pathspec(repo, untracked),
            };
            diff_to_worktree(repo, resolved.tree.as_ref(), &options, scan)
        }
        Target::Rev(_) => repo.diff_tree_to_tree(
            resolved.tree.as_ref(),
            resolved.target.as_ref(),
            Some(&mut options()),
        ),
    }
    .map_err(|e| git_err(&e))
}

/// Base tree → working tree with the index, as libgit2's `diff_tree_to_workdir_with_index`
/// (which is the tree → index and index → working-tree diffs merged), the first diff limited to
/// the paths where the index differs from the base (see [`staged_paths`]) and the second to
/// the scan's paths (see [`worktree_pathspec`]), when they are known.
fn diff_to_worktree<'r>(
    repo: &'r Repository,
    tree: Option<&git2::Tree<'r>>,
    options: &dyn Fn() -> DiffOptions,
    scan: Option<WorktreeScan>,
) -> Result<git2::Diff<'r>, git2::Error> {
    let Some(scan) = scan else {
        return repo.diff_tree_to_workdir_with_index(tree, Some(&mut options()));
    };
    let mut index = repo.index()?;
    let mut staged_options = options();
    if let Some(staged) = tree
        .filter(|_| scan.plain_entries)
        .and_then(|t| staged_paths(repo, t, &mut index))
    {
        limit_to(&mut staged_options, staged);
    }
    let mut staged = repo.diff_tree_to_index(tree, Some(&index), Some(&mut staged_options))?;
    let mut worktree_options = options();
    limit_to(&mut worktree_options, scan.paths);
    let worktree = repo.diff_index_to_workdir(Some(&index), Some(&mut worktree_options))?;
    staged.merge(&worktree)?;
    Ok(staged)
}

/// Limits a diff to `paths`, taken literally: a name stands for itself and, as a directory,
/// for everything below it. No paths limits it to nothing (`.git` is never in a tree, the index
/// or the walk; an empty list would mean everything).
fn limit_to(o: &mut DiffOptions, paths: Vec<Vec<u8>>) {
    o.disable_pathspec_match(true);
    if paths.is_empty() {
        o.pathspec(".git");
    }
    for p in paths {
        o.pathspec(p);
    }
}

/// The paths where the index differs from the base tree, so that the base → index diff reads
/// only the trees on the way to them instead of all of the base's trees (docs/diff.md, "Change
/// detection"). Found as git finds them: the index's tree comes from its cache of directory
/// trees, and the two trees are compared level by level, skipping every subtree whose id is
/// the same on both sides. A directory the cache does not vouch for is built in memory, never
/// written to the repository. For an index of plain entries only (no conflicts, intent-to-add
/// or skip-worktree entries, which a tree does not hold as they are: the caller's
/// [`WorktreeScan`] says so); `None` (compare everything) when any step fails.
fn staged_paths(
    repo: &Repository,
    base: &git2::Tree<'_>,
    index: &mut git2::Index,
) -> Option<Vec<Vec<u8>>> {
    // Reads go to the repository's objects (an alternate, which is never written to); the
    // trees built, if any, stay in memory. A linked work tree keeps its objects in the common
    // directory.
    let odb = git2::Odb::new().ok()?;
    odb.add_new_mempack_backend(1000).ok()?;
    odb.add_disk_alternate(repo.commondir().join("objects").to_str()?)
        .ok()?;
    let in_memory = Repository::from_odb(odb).ok()?;
    let staged = index.write_tree_to(&in_memory).ok()?;
    if staged == base.id() {
        return Some(Vec::new());
    }
    let paths = in_memory
        .find_tree(base.id())
        .ok()
        .zip(in_memory.find_tree(staged).ok())
        .and_then(|(old, new)| differing_paths(&in_memory, old, new));
    // Building trees also refreshed the index's cache with them, trees only this call's
    // memory holds: read the index again so that nothing later trusts them.
    if repo.find_tree(staged).is_err() {
        index.read(true).ok()?;
    }
    paths
}

/// The paths of the entries that differ between two trees (id or mode), descending only into
/// subtrees that differ on both sides; an entry that is a tree on one side only is named once
/// (the name covers what is below it). `None` when a tree cannot be read.
fn differing_paths(
    repo: &Repository,
    old: git2::Tree<'_>,
    new: git2::Tree<'_>,
) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    // An explicit stack: a hostile repository's nesting must not exhaust the call stack.
    let mut pending = vec![(Vec::new(), old, new)];
    while let Some((prefix, old, new)) = pending.pop() {
        let path = |name: &[u8]| {
            let mut p = prefix.clone();
            if !p.is_empty() {
                p.push(b'/');
            }
            p.extend_from_slice(name);
            p
        };
        for entry in new.iter() {
            let name = entry.name_bytes();
            let Some(before) = old.get_name_bytes(name) else {
                out.push(path(name));
                continue;
            };
            if before.id() == entry.id() && before.filemode() == entry.filemode() {
                continue;
            }
            let is_tree = |e: &git2::TreeEntry<'_>| e.kind() == Some(git2::ObjectType::Tree);
            if is_tree(&before) && is_tree(&entry) {
                let old_sub = repo.find_tree(before.id()).ok()?;
                let new_sub = repo.find_tree(entry.id()).ok()?;
                pending.push((path(name), old_sub, new_sub));
            } else {
                out.push(path(name));
            }
        }
        for entry in old.iter() {
            if new.get_name_bytes(entry.name_bytes()).is_none() {
                out.push(path(entry.name_bytes()));
            }
        }
    }
    Some(out)
}

/// One pass over the index for the working-tree diff (see [`worktree_pathspec`]).
struct WorktreeScan {
    /// The paths the index → working-tree diff has to look at.
    paths: Vec<Vec<u8>>,
    /// Every entry is plain: no conflict stage, intent-to-add or skip-worktree flag, so the
    /// index is exactly a tree ([`staged_paths`] may be used).
    plain_entries: bool,
}

/// What the index → working-tree diff has to look at, so that libgit2 neither walks nor stats
/// the rest (docs/diff.md, "Change detection"): every index entry whose `lstat` differs from
/// the index's stat data — or that is racily clean, unmerged or flagged — and, with
/// `untracked`, every name in a tracked directory that the index does not know (`dir/` for a
/// directory, which libgit2 then walks with its ignore rules). An entry left out is one libgit2
/// would find unmodified from its stat data alone, so the diff is the same. `None` (walk
/// everything, as libgit2 does) for what this does not model: `core.ignorecase`, submodules, a
/// tracked path whose directory is now a symlink or a file, a tracked file that is now a
/// directory, an index that cannot be read.
#[cfg(unix)]
fn worktree_pathspec(repo: &Repository, untracked: bool) -> Option<WorktreeScan> {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;

    const STAGE_MASK: u16 = 0x3000;
    const ASSUME_VALID: u16 = 0x8000;
    const MODE_TYPE: u32 = 0o170000;
    const GITLINK: u32 = 0o160000;
    const SYMLINK: u32 = 0o120000;
    const EXECUTABLE: u32 = 0o100755;
    const INTENT_TO_ADD_OR_SKIP_WORKTREE: u16 = (1 << 13) | (1 << 14);

    let root = repo.workdir()?;
    let cfg = repo.config().ok()?.snapshot().ok()?;
    if cfg.get_bool("core.ignorecase").unwrap_or(false) {
        return None;
    }
    let index = repo.index().ok()?;
    // A file modified in the second the index was written can have the index's stat data and
    // other content: libgit2 hashes those, so they stay in (seconds only, coarser than its test).
    let index_written = std::fs::metadata(repo.path().join("index")).ok()?.mtime();
    let mut paths = Vec::new();
    let mut tracked_files: HashSet<Vec<u8>> = HashSet::new();
    // Directories that hold tracked files ("" = the root).
    let mut tracked_dirs: HashSet<Vec<u8>> = HashSet::from([Vec::new()]);
    let mut plain_entries = true;
    for entry in index.iter() {
        if entry.mode & MODE_TYPE == GITLINK {
            return None;
        }
        plain_entries &= entry.flags & STAGE_MASK == 0
            && entry.flags_extended & INTENT_TO_ADD_OR_SKIP_WORKTREE == 0;
        let rel = &entry.path;
        let mut end = rel.len();
        while let Some(slash) = rel[..end].iter().rposition(|&b| b == b'/') {
            let dir = &rel[..slash];
            if tracked_dirs.contains(dir) {
                break;
            }
            let real = std::fs::symlink_metadata(root.join(OsStr::from_bytes(dir)));
            match real {
                Ok(m) if m.is_dir() => {}
                // Gone: the files below it are deletions, found by their own lstat.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                _ => return None,
            }
            tracked_dirs.insert(dir.to_vec());
            end = slash;
        }
        let unchanged = match std::fs::symlink_metadata(root.join(OsStr::from_bytes(rel))) {
            Ok(m) if m.is_dir() => return None,
            Ok(m) => {
                let same_type = if entry.mode & MODE_TYPE == SYMLINK {
                    m.file_type().is_symlink()
                } else {
                    m.is_file() && ((m.mode() & 0o100 != 0) == (entry.mode == EXECUTABLE))
                };
                same_type
                    && entry.flags & (STAGE_MASK | ASSUME_VALID) == 0
                    && entry.flags_extended == 0
                    && entry.file_size == m.size() as u32
                    && entry.mtime.seconds() == m.mtime() as i32
                    && entry.mtime.nanoseconds() == m.mtime_nsec() as u32
                    && entry.ctime.seconds() == m.ctime() as i32
                    && entry.ctime.nanoseconds() == m.ctime_nsec() as u32
                    && entry.ino == m.ino() as u32
                    && entry.uid == m.uid()
                    && entry.gid == m.gid()
                    && m.mtime() < index_written
            }
            Err(_) => false,
        };
        if !unchanged {
            paths.push(rel.clone());
        }
        if untracked {
            tracked_files.insert(rel.clone());
        }
    }
    if untracked {
        for dir in &tracked_dirs {
            let Ok(entries) = std::fs::read_dir(root.join(OsStr::from_bytes(dir))) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let mut rel = dir.clone();
                if !rel.is_empty() {
                    rel.push(b'/');
                }
                rel.extend_from_slice(name.as_bytes());
                if dir.is_empty() && name.as_bytes() == b".git" {
                    continue;
                }
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    if !tracked_dirs.contains(&rel) {
                        rel.push(b'/');
                        paths.push(rel);
                    }
                } else if !tracked_files.contains(&rel) {
                    paths.push(rel);
                }
            }
        }
    }
    Some(WorktreeScan {
        paths,
        plain_entries,
    })
}

#[cfg(not(unix))]
fn worktree_pathspec(_repo: &Repository, _untracked: bool) -> Option<WorktreeScan> {
    None
}

fn changed_file(row: &Row) -> Option<ChangedFile> {
    let status = status_of(row.status)?;
    let new = row.new_path.clone();
    let old = row.old_path.clone();
    let path = match status {
        Status::Deleted => old.clone().or(new)?,
        _ => new.or_else(|| old.clone())?,
    };
    let old_path = match status {
        Status::Renamed | Status::Copied => old.filter(|o| *o != path),
        _ => None,
    };
    let same_content = old_path.is_some() && !row.old_id.is_zero() && row.old_id == row.new_id;
    Some(ChangedFile {
        status,
        path,
        old_path,
        same_content,
    })
}

/// Changed paths between the base and the target (for the working tree: committed since the
/// base, staged, unstaged and — with `untracked` — untracked files), renames followed.
pub fn changed_files(repo: &Path, opts: &ChangeOptions) -> Result<ChangeSet, Diagnostic> {
    let handle = open_repository(repo)?;
    let repo = handle.git2();
    let resolved = resolve(&handle, opts)?;
    let diff = build_diff(repo, &resolved, opts, false)?;
    let files = diff.rows.iter().filter_map(changed_file).collect();
    Ok(ChangeSet {
        root: root_of(repo),
        base: resolved.base,
        head: resolved.head.as_ref().map(|c| c.id().to_string()),
        files,
    })
}

/// Per-path git settings the whitespace check needs.
struct Settings {
    config_rule: WsRule,
    big_file: u64,
    /// `core.autocrlf` is on (true or input): every text file may be converted on the way in.
    autocrlf: bool,
    /// The attribute names any attribute source of this change mentions (`None`: not scanned,
    /// look every attribute up).
    attr_names: Option<AttrNames>,
}

/// The text of every attribute source a lookup for the change's paths can read: each
/// `.gitattributes` in the index and in the working tree (tracked or not) along the changed
/// paths, `$GIT_DIR/info/attributes`, `core.attributesFile` (or the XDG default) and the system
/// file. An attribute whose name appears in none of them is unspecified for every path, so its
/// lookup — libgit2 stats each ancestor's `.gitattributes` per call, about nine calls per file —
/// is skipped (docs/diff.md). A substring match over-approximates, which only costs lookups.
struct AttrNames {
    text: String,
    /// A source defines a macro (`[attr]`) or could not be read: names can hide, look all up.
    everything: bool,
}

impl AttrNames {
    fn scan<'p>(
        repo: &Repository,
        root: &Path,
        changed: impl Iterator<Item = &'p Path>,
    ) -> AttrNames {
        let mut names = AttrNames {
            text: String::new(),
            everything: false,
        };
        // Working-tree files along every changed path (a new, untracked one counts too).
        let mut dirs: HashSet<&Path> = HashSet::new();
        for path in changed {
            let mut dir = path.parent();
            while let Some(d) = dir {
                if !dirs.insert(d) {
                    break;
                }
                dir = d.parent();
            }
        }
        dirs.insert(Path::new(""));
        for d in &dirs {
            names.read(&root.join(d).join(".gitattributes"), true);
        }
        // git's own attribute files, outside the work tree: size-limited, never confined.
        names.read(&repo.path().join("info").join("attributes"), false);
        names.read(Path::new("/etc/gitattributes"), false);
        let attributes_file = repo
            .config()
            .and_then(|c| c.get_path("core.attributesFile"))
            .ok()
            .or_else(|| {
                let xdg = std::env::var_os("XDG_CONFIG_HOME")
                    .map(PathBuf::from)
                    .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")))?;
                Some(xdg.join("git").join("attributes"))
            });
        if let Some(f) = attributes_file {
            names.read(&f, false);
        }
        // Tracked ones anywhere (read from the index when missing from the working tree).
        match repo.index() {
            Ok(index) => {
                for entry in index.iter() {
                    let Ok(path) = std::str::from_utf8(&entry.path) else {
                        names.everything = true;
                        continue;
                    };
                    let path = Path::new(path);
                    if path.file_name() != Some(std::ffi::OsStr::new(".gitattributes")) {
                        continue;
                    }
                    if !path.parent().is_some_and(|d| dirs.contains(d)) {
                        names.read(&root.join(path), true);
                    }
                    match repo.find_blob(entry.id) {
                        Ok(b) => names.text.push_str(&String::from_utf8_lossy(b.content())),
                        Err(_) => names.everything = true,
                    }
                }
            }
            Err(_) => names.everything = true,
        }
        if names.text.contains("[attr]") {
            names.everything = true;
        }
        names
    }

    /// Adds one source. Only regular files are read here (a symlink or FIFO is libgit2's to
    /// judge: its lookups then run as before); a work-tree file through infx-fs (`in_tree`),
    /// git's own files size-limited but unconfined.
    fn read(&mut self, p: &Path, in_tree: bool) {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_file() => {
                let read = if in_tree {
                    infx_fs::read(p)
                } else {
                    infx_fs::read_unconfined(p)
                };
                match read {
                    Ok(b) => self.text.push_str(&String::from_utf8_lossy(&b)),
                    Err(_) => self.everything = true,
                }
            }
            Ok(_) => self.everything = true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => self.everything = true,
        }
    }

    fn may_set(&self, name: &str) -> bool {
        // The built-in `binary` macro unsets `diff` and `text`.
        self.everything
            || self.text.contains(name)
            || (matches!(name, "diff" | "text") && self.text.contains("binary"))
    }
}

impl Settings {
    fn load(repo: &Repository) -> Result<Settings, Diagnostic> {
        let cfg = repo
            .config()
            .and_then(|mut c| c.snapshot())
            .map_err(|e| git_err(&e))?;
        let config_rule = match cfg.get_string("core.whitespace") {
            Ok(v) => WsRule::parse(&v).map_err(|m| {
                Diagnostic::error(codes::WHITESPACE_RULE, format!("core.whitespace: {m}"))
                    .with_help("drop one of them: `git config core.whitespace <rules>`")
            })?,
            Err(_) => WsRule::default(),
        };
        let big_file = cfg
            .get_i64("core.bigFileThreshold")
            .ok()
            .and_then(|v| u64::try_from(v).ok())
            .unwrap_or(BIG_FILE_THRESHOLD);
        let autocrlf = match cfg.get_bool("core.autocrlf") {
            Ok(b) => b,
            Err(_) => cfg.get_string("core.autocrlf").is_ok_and(|v| v == "input"),
        };
        Ok(Settings {
            config_rule,
            big_file,
            autocrlf,
            attr_names: None,
        })
    }

    fn attr<'a>(&self, repo: &'a Repository, path: &Path, name: &str) -> AttrValue<'a> {
        if self.attr_names.as_ref().is_some_and(|n| !n.may_set(name)) {
            return AttrValue::Unspecified;
        }
        AttrValue::from_string(
            repo.get_attr(path, name, AttrCheckFlags::FILE_THEN_INDEX)
                .ok()
                .flatten(),
        )
    }

    fn rule(&self, repo: &Repository, path: &Path) -> Result<WsRule, Diagnostic> {
        let attr = match self.attr(repo, path, "whitespace") {
            AttrValue::True => WsAttr::Set,
            AttrValue::False => WsAttr::Unset,
            AttrValue::String(s) => WsAttr::Value(s.to_string()),
            AttrValue::Bytes(b) => WsAttr::Value(String::from_utf8_lossy(b).into_owned()),
            AttrValue::Unspecified => WsAttr::Unspecified,
        };
        WsRule::for_attr(self.config_rule, &attr).map_err(|m| {
            Diagnostic::error(codes::WHITESPACE_RULE, format!("whitespace attribute: {m}"))
                .with_path(path)
                .with_help("fix the `whitespace=` attribute in .gitattributes")
        })
    }

    /// Whether git's clean conversion (CRLF/eol, ident, filter drivers, encodings) may change
    /// the working-tree bytes of `path` before they are compared.
    fn may_convert(&self, repo: &Repository, path: &Path) -> bool {
        if self.autocrlf {
            return true;
        }
        let set = |name| {
            !matches!(
                self.attr(repo, path, name),
                AttrValue::Unspecified | AttrValue::False
            )
        };
        set("text")
            || set("eol")
            || set("crlf")
            || set("ident")
            || set("filter")
            || set("working-tree-encoding")
    }

    fn marker_size(&self, repo: &Repository, path: &Path) -> usize {
        match self.attr(repo, path, "conflict-marker-size") {
            AttrValue::String(s) => ws::marker_size(Some(s)),
            _ => ws::marker_size(None),
        }
    }

    /// The `diff` attribute's verdict: `Some(true)` binary, `Some(false)` text, `None` sniff.
    fn diff_attr_binary(&self, repo: &Repository, path: &Path) -> Option<bool> {
        match self.attr(repo, path, "diff") {
            AttrValue::True => Some(false),
            AttrValue::False => Some(true),
            AttrValue::String(driver) => {
                let cfg = repo.config().ok()?;
                cfg.get_bool(&format!("diff.{driver}.binary")).ok()
            }
            _ => None,
        }
    }
}

/// A refused work-tree read as a finding at `path` (repository-relative).
fn fs_diag(e: &infx_fs::FsError, path: &Path) -> Diagnostic {
    // A file that cannot be read (absent, permissions) keeps this crate's code; a refusal
    // (outside the root, not regular, too large) is the file layer's.
    let code = match e.kind {
        infx_fs::FsErrorKind::Unreadable => codes::IO,
        _ => e.code(),
    };
    Diagnostic::error(code, e.message.clone())
        .with_path(path)
        .with_help(e.help())
}

/// A symlink's content as git stores it: the target's name (never what it points to).
fn link_text(full: &Path) -> Option<Vec<u8>> {
    let m = std::fs::symlink_metadata(full).ok()?;
    m.file_type().is_symlink().then(|| {
        std::fs::read_link(full)
            .map(|t| t.into_os_string().into_encoded_bytes())
            .unwrap_or_default()
    })
}

/// The working-tree content of `path` as git sees it unconverted (a symlink's target name).
/// A regular file is read through infx-fs: confined to the repository, at most 16 MiB, never a
/// FIFO or device (docs/security.md, "The safe file layer").
fn worktree_bytes(root: &Path, path: &Path) -> Result<Vec<u8>, Diagnostic> {
    let full = root.join(path);
    match link_text(&full) {
        Some(text) => Ok(text),
        None => infx_fs::read(&full).map_err(|e| fs_diag(&e, path)),
    }
}

/// Before libgit2 reads the working-tree file `path` itself (a converted text): a regular
/// file must pass infx-fs's checks (confined, regular, size); a symlink is its target's name.
fn worktree_check(root: &Path, path: &Path) -> Result<(), Diagnostic> {
    let full = root.join(path);
    if link_text(&full).is_some() {
        return Ok(());
    }
    infx_fs::check_file(&full)
        .map(|_| ())
        .map_err(|e| fs_diag(&e, path))
}

/// The first bytes (and size) of the working-tree version of `path`, for the binary test.
fn worktree_head(root: &Path, path: &Path) -> Result<(Vec<u8>, u64), Diagnostic> {
    let full = root.join(path);
    if let Some(target) = link_text(&full) {
        let len = target.len() as u64;
        return Ok((target, len));
    }
    infx_fs::read_prefix(&full, 8000).map_err(|e| fs_diag(&e, path))
}

/// A blob's bytes (none for the zero id: no such side).
fn blob_bytes(repo: &Repository, id: Oid) -> Result<Vec<u8>, Diagnostic> {
    if id.is_zero() {
        return Ok(Vec::new());
    }
    repo.find_blob(id)
        .map(|b| b.content().to_vec())
        .map_err(|e| git_err(&e))
}

/// Both full texts of delta `idx` from a whole-file patch, and the added line numbers.
type Texts = (Vec<u8>, Vec<u8>, Vec<usize>);

fn texts_from_patch(diff: &git2::Diff<'_>, idx: usize) -> Result<Texts, Diagnostic> {
    let mut old = Vec::new();
    let mut new = Vec::new();
    let mut added = Vec::new();
    let Some(patch) = git2::Patch::from_diff(diff, idx).map_err(|e| git_err(&e))? else {
        return Ok((old, new, added));
    };
    for h in 0..patch.num_hunks() {
        let n = patch.num_lines_in_hunk(h).map_err(|e| git_err(&e))?;
        for l in 0..n {
            let line = patch.line_in_hunk(h, l).map_err(|e| git_err(&e))?;
            match line.origin() {
                ' ' => {
                    old.extend_from_slice(line.content());
                    new.extend_from_slice(line.content());
                }
                '-' => old.extend_from_slice(line.content()),
                '+' => {
                    new.extend_from_slice(line.content());
                    added.extend(line.new_lineno().map(|n| n as usize));
                }
                // '=', '>', '<': the "no newline at end of file" markers, not content.
                _ => {}
            }
        }
    }
    Ok((old, new, added))
}

/// The bytes git would commit for the working-tree file `path` (relative to the repository
/// root): its clean conversion applied (`core.autocrlf`, `text`/`eol`/`crlf` attributes, ...),
/// which is what `git diff` and `git diff --check` compare. On a `core.autocrlf=true` checkout
/// (Git for Windows' default) a file checked out as CRLF reads back as the LF git stores, so a
/// check of the raw bytes does not fail on line endings git would never commit
/// (docs/diff.md). Without any conversion in effect these are the bytes on disk.
pub fn worktree_bytes_to_commit(repo: &Path, path: &Path) -> Result<Vec<u8>, Diagnostic> {
    let handle = open_repository(repo)?;
    let repo = handle.git2();
    let root = root_of(repo);
    // Through infx-fs (confined, regular, size-limited), following an in-repository symlink
    // as the loaders do: a link to /dev/zero, a FIFO or a file outside is refused, not read
    // (docs/security.md, "The safe file layer").
    let full = root.join(path);
    let read = || infx_fs::read(&full).map_err(|e| fs_diag(&e, path));
    let is_link = link_text(&full).is_some();
    if is_link || repo.is_bare() || !Settings::load(repo)?.may_convert(repo, path) {
        return read();
    }
    worktree_check(&root, path)?;
    // libgit2 applies the clean filters to working-tree content it diffs: a whole-file diff of
    // just this path against the empty tree carries the converted text as its added side.
    let mut o = DiffOptions::new();
    o.pathspec(path)
        .disable_pathspec_match(true)
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .show_untracked_content(true)
        .force_text(true)
        .context_lines(WHOLE_FILE_CONTEXT)
        .interhunk_lines(0);
    let diff = repo
        .diff_tree_to_workdir(None, Some(&mut o))
        .map_err(|e| git_err(&e).with_path(path))?;
    let idx = diff
        .deltas()
        .position(|d| d.new_file().path() == Some(path));
    match idx {
        Some(idx) => texts_from_patch(&diff, idx).map(|(_, new, _)| new),
        // Not in the diff (ignored, or not a regular file): nothing converts it.
        None => read(),
    }
}

/// Loads the change set and the old/new texts of every changed text file, with the whitespace
/// rule and conflict-marker size git would use for each (`core.whitespace`, `.gitattributes`).
pub fn load_change(repo: &Path, opts: &ChangeOptions) -> Result<Change, Diagnostic> {
    load_change_in(&open_repository(repo)?, opts)
}

/// [`load_change`] in a repository the caller has open ([`open_repository`]).
pub fn load_change_in(handle: &Repo, opts: &ChangeOptions) -> Result<Change, Diagnostic> {
    let repo = handle.git2();
    let mut settings = Settings::load(repo)?;
    let resolved = resolve(handle, opts)?;
    let diff = build_diff(repo, &resolved, opts, true)?;
    let root = root_of(repo);
    // One scan of the attribute sources for the whole change instead of ~9 lookups per file.
    let paths = diff
        .rows
        .iter()
        .flat_map(|r| [r.old_path.as_deref(), r.new_path.as_deref()])
        .flatten();
    settings.attr_names = Some(AttrNames::scan(repo, &root, paths));
    let mut files = Vec::new();
    let mut texts = Vec::new();
    let mut binary = Vec::new();
    for row in &diff.rows {
        let Some(file) = changed_file(row) else {
            continue;
        };
        let skip =
            file.status == Status::Deleted || row.new_mode == u32::from(git2::FileMode::Commit);
        let path = file.path.clone();
        let conflicted = file.status == Status::Conflicted;
        files.push(file);
        if skip {
            continue;
        }
        // Whether the bytes read for the binary test are the new side as git compares it: a
        // blob, or a working-tree file no clean conversion can change.
        let as_compared = match opts.target {
            Target::WorkTree => !settings.may_convert(repo, &path),
            Target::Rev(_) => true,
        };
        // An exact rename whose bytes no conversion can change: its working-tree file is the
        // blob, byte for byte, so the blob serves the binary test and both texts (a
        // tree-wide move read and stat-checked each moved file once more for its first
        // bytes; docs/performance.md, "Renames").
        // The size from the object's header: a blob over the limit is not inflated.
        let moved_blob = (row.patch.is_none() && opts.target == Target::WorkTree && as_compared)
            .then(|| handle.blob_size(row.old_id))
            .flatten();
        // The new side's bytes when the binary test read them whole: they are its text (a
        // change of thousands of new recipe files opened, stat-checked and read each one
        // twice; docs/performance.md, "One read of a small new file").
        let mut held: Option<Vec<u8>> = None;
        let is_binary = match settings.diff_attr_binary(repo, &path) {
            Some(b) => b,
            None if let Some(size) = moved_blob => {
                if size > settings.big_file {
                    true
                } else {
                    let bytes = blob_bytes(repo, row.old_id)?;
                    let binary = ws::looks_binary(bytes.get(..8000).unwrap_or(&bytes));
                    held = Some(bytes);
                    binary
                }
            }
            None => {
                let (head, size) = match &opts.target {
                    Target::WorkTree => worktree_head(&root, &path)?,
                    Target::Rev(_) => {
                        let b = blob_bytes(repo, row.new_id)?;
                        let size = b.len() as u64;
                        (b, size)
                    }
                };
                let binary = size > settings.big_file || ws::looks_binary(&head);
                if as_compared && head.len() as u64 == size {
                    held = Some(head);
                }
                binary
            }
        };
        if is_binary {
            binary.push(path);
            continue;
        }
        let rule = settings.rule(repo, &path)?;
        let marker_size = settings.marker_size(repo, &path);
        // An exact rename: both sides are the one blob (the new side's id is the
        // working-tree file's, after its clean conversion), shared; nothing is added.
        if row.patch.is_none() {
            let text: Arc<[u8]> = match held {
                Some(bytes) => bytes.into(),
                None => blob_bytes(repo, row.old_id)?.into(),
            };
            texts.push(FileText::from_texts(
                path,
                rule,
                marker_size,
                (text.clone(), text, Vec::new()),
            ));
            continue;
        }
        let (old, new, added) = match &opts.target {
            // Unmerged: git checks the working-tree file (markers and all) against the base.
            Target::WorkTree if conflicted => {
                let old = match resolved.tree.as_ref().and_then(|t| t.get_path(&path).ok()) {
                    Some(e) => blob_bytes(repo, e.id())?,
                    None => Vec::new(),
                };
                let new = match held {
                    Some(bytes) => bytes,
                    None => worktree_bytes(&root, &path)?,
                };
                let added = added_between(&path, &old, &new)?;
                (old, new, added)
            }
            // No conversion can apply (`as_compared`): the working-tree bytes are what git
            // compares. Reading them directly skips libgit2's re-hashing and whole-file patch
            // (the slow part).
            Target::WorkTree if as_compared => {
                let new = match held {
                    Some(bytes) => bytes,
                    None => worktree_bytes(&root, &path)?,
                };
                let old_id = row.old_id;
                if old_id.is_zero() {
                    let added = added_between(&path, &[], &new)?;
                    (Vec::new(), new, added)
                } else {
                    // Diffing against the blob spares libgit2 re-hashing the old text.
                    let blob = repo.find_blob(old_id).map_err(|e| git_err(&e))?;
                    let added = added_against_blob(&path, &blob, &new)?;
                    (blob.content().to_vec(), new, added)
                }
            }
            // The whole-file patch carries the converted text and the line classification.
            Target::WorkTree => {
                worktree_check(&root, &path)?;
                let patch = row
                    .patch
                    .and_then(|(w, idx)| Some((diff.diffs.get(w)?, idx)));
                match patch {
                    Some((d, idx)) => texts_from_patch(d, idx)?,
                    None => (Vec::new(), Vec::new(), Vec::new()),
                }
            }
            Target::Rev(_) => {
                let old = blob_bytes(repo, row.old_id)?;
                let new = match held {
                    Some(bytes) => bytes,
                    None => blob_bytes(repo, row.new_id)?,
                };
                let added = added_between(&path, &old, &new)?;
                (old, new, added)
            }
        };
        texts.push(FileText::from_texts(
            path,
            rule,
            marker_size,
            (old.into(), new.into(), added),
        ));
    }
    Ok(Change {
        set: ChangeSet {
            root,
            base: resolved.base,
            head: resolved.head.as_ref().map(|c| c.id().to_string()),
            files,
        },
        texts,
        binary,
    })
}

fn shallow_boundary(repo: &Repository) -> HashSet<Oid> {
    std::fs::read_to_string(repo.path().join("shallow"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| Oid::from_str(l.trim()).ok())
        .collect()
}

fn entry_at(commit: &git2::Commit<'_>, path: &Path) -> Option<(Oid, i32)> {
    let tree = commit.tree().ok()?;
    let e = tree.get_path(path).ok()?;
    Some((e.id(), e.filemode()))
}

/// The last commit reachable from HEAD that changed `path` (relative to the repository root),
/// as `(parent, commit)` hex ids — what `git log -1 -- <path>` shows, with its default history
/// simplification (a merge that kept one parent's version is passed through to that parent).
/// For a root commit the parent is [`EMPTY_TREE`]. `Ok(None)` when no commit touched it.
pub fn last_commit_touching(
    repo: &Path,
    path: &Path,
) -> Result<Option<(String, String)>, Diagnostic> {
    last_commit_touching_in(&open_repository(repo)?, path)
}

/// [`last_commit_touching`] in a repository the caller has open.
pub fn last_commit_touching_in(
    handle: &Repo,
    path: &Path,
) -> Result<Option<(String, String)>, Diagnostic> {
    let repo = handle.git2();
    let Some(mut cur) = head_commit(repo)? else {
        return Ok(None);
    };
    let boundary = shallow_boundary(repo);
    // The version at `cur`; a parent followed below has the same one, so it is looked up once
    // per commit (each lookup reads the trees along the path).
    let here = entry_at(&cur, path);
    loop {
        let parents: Vec<git2::Commit<'_>> = cur.parents().collect();
        if parents.is_empty() {
            if here.is_none() {
                return Ok(None);
            }
            if boundary.contains(&cur.id()) {
                return Err(shallow_help(&format!(
                    "the commit that last changed {}",
                    path.display()
                )));
            }
            return Ok(Some((EMPTY_TREE.to_string(), cur.id().to_string())));
        }
        // Follow the first parent that has the same version (git's TREESAME simplification).
        if let Some(same) = parents.iter().find(|p| entry_at(p, path) == here) {
            cur = same.clone();
            continue;
        }
        return Ok(Some((parents[0].id().to_string(), cur.id().to_string())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A new repository in `dir` whose first commit holds `files` (each file's text is its
    /// name), ignored ones included.
    fn commit_files(dir: &Path, files: &[&str]) {
        git(dir, &["init", "-q", "-b", "main"]);
        for f in files {
            write(dir, f, &format!("{f}\n"));
        }
        git(dir, &["add", "-A", "-f"]);
        git(dir, &["commit", "-q", "-m", "base"]);
    }

    type Row = (Delta, Option<PathBuf>, Option<PathBuf>, Oid, Oid, u32, u32);

    fn rows(diff: &git2::Diff<'_>) -> Vec<Row> {
        diff.deltas()
            .map(|d| {
                let (o, n) = (d.old_file(), d.new_file());
                let mode = |f: &git2::DiffFile<'_>| u32::from(f.mode());
                (
                    d.status(),
                    o.path().map(Path::to_path_buf),
                    n.path().map(Path::to_path_buf),
                    o.id(),
                    n.id(),
                    mode(&o),
                    mode(&n),
                )
            })
            .collect()
    }

    /// The working-tree diff limited by `worktree_pathspec` against libgit2's full walk.
    fn assert_same_as_full_walk(dir: &Path, expect_limited: bool) {
        assert_same_as_full_walk_from(dir, "HEAD", expect_limited);
    }

    /// As [`assert_same_as_full_walk`], from the base `rev`.
    fn assert_same_as_full_walk_from(dir: &Path, rev: &str, expect_limited: bool) {
        let repo = Repository::open(dir).unwrap();
        let head = repo.revparse_single(rev).unwrap().peel_to_tree().unwrap();
        for untracked in [false, true] {
            let opts = || diff_options(untracked, false);
            let only = worktree_pathspec(&repo, untracked);
            assert_eq!(only.is_some(), expect_limited, "untracked: {untracked}");
            if let Some(scan) = &only {
                let paths = &scan.paths;
                assert!(!paths.contains(&b"other/z.yaml".to_vec()), "{paths:?}");
            }
            let limited = diff_to_worktree(&repo, Some(&head), &opts, only).unwrap();
            let full = diff_to_worktree(&repo, Some(&head), &opts, None).unwrap();
            assert_eq!(rows(&limited), rows(&full), "untracked: {untracked}");
            assert!(!rows(&full).is_empty());
        }
    }

    #[test]
    fn limited_worktree_diff_is_the_full_walk() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        write(dir, ".gitignore", "*.log\nbuild/\n");
        commit_files(
            dir,
            &[
                "a.txt",
                "same.txt",
                "exec.sh",
                "gone.txt",
                "staged.txt",
                "link-me.txt",
                "ita-base.txt",
                "sub/deep/x.yaml",
                "sub/y.yaml",
                "other/z.yaml",
                "build/kept.txt",
            ],
        );
        // Committed, staged, unstaged (same size and longer), deleted, mode and type changes.
        write(dir, "sub/y.yaml", "committed\n");
        git(dir, &["commit", "-q", "-am", "c"]);
        // Stat data older than the index, as in a real clone: unchanged files are left out.
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        for f in [
            "a.txt",
            "same.txt",
            "sub/y.yaml",
            "sub/deep/x.yaml",
            "other/z.yaml",
        ] {
            let file = std::fs::File::options()
                .append(true)
                .open(dir.join(f))
                .unwrap();
            file.set_modified(past).unwrap();
        }
        git(dir, &["update-index", "-q", "--refresh"]);
        write(dir, "staged.txt", "staged change\n");
        git(dir, &["add", "staged.txt"]);
        write(dir, "a.txt", "A.TXT\n");
        write(dir, "sub/deep/x.yaml", "longer than before\n");
        write(
            dir,
            "build/kept.txt",
            "tracked inside an ignored directory\n",
        );
        std::fs::remove_file(dir.join("gone.txt")).unwrap();
        let exec = dir.join("exec.sh");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exec, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::remove_file(dir.join("link-me.txt")).unwrap();
        std::os::unix::fs::symlink("a.txt", dir.join("link-me.txt")).unwrap();
        // Intent to add, untracked files and directories, ignored ones, a nested repository.
        write(dir, "ita.txt", "intent\n");
        git(dir, &["add", "-N", "ita.txt"]);
        write(dir, "new.txt", "n\n");
        write(dir, "sub/new.yaml", "n\n");
        write(dir, "fresh/dir/f.yaml", "n\n");
        write(dir, "fresh/g.yaml", "n\n");
        write(dir, "empty-untracked/.keep", "");
        write(dir, "x.log", "ignored\n");
        write(dir, "build/out.o", "ignored\n");
        write(dir, "sub/deep/ignored.log", "ignored\n");
        write(dir, "nested/inner.txt", "n\n");
        git(&dir.join("nested"), &["init", "-q"]);
        // Racily clean: written in the same second as the index.
        write(dir, "same.txt", "SAME.TXT\n");
        assert_same_as_full_walk(dir, true);
        // The intent-to-add entry keeps the base → index diff unlimited.
        let repo = Repository::open(dir).unwrap();
        assert!(!worktree_pathspec(&repo, false).unwrap().plain_entries);

        // A tracked file that became a directory, a tracked directory that became a symlink:
        // not modelled, so the full walk runs.
        std::fs::remove_file(dir.join("ita-base.txt")).unwrap();
        write(dir, "ita-base.txt/inside.txt", "x\n");
        assert_same_as_full_walk(dir, false);
        std::fs::remove_dir_all(dir.join("ita-base.txt")).unwrap();
        std::fs::rename(dir.join("other"), dir.join("other-real")).unwrap();
        std::os::unix::fs::symlink("other-real", dir.join("other")).unwrap();
        assert_same_as_full_walk(dir, false);
    }

    /// The base → index diff limited to `staged_paths` against the full one, from a base some
    /// commits back and with changes staged: nested edits, added and removed directories, a
    /// mode change, a file that became a directory and one that became a file.
    #[test]
    fn staged_paths_name_what_the_index_changed_from_the_base() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        commit_files(
            dir,
            &[
                "a.txt",
                "keep/k.txt",
                "dir/deep/x.yaml",
                "dir/deep/same.yaml",
                "dir/y.yaml",
                "gone/g.txt",
                "mode.sh",
                "todir",
                "tofile/inner.txt",
                "same/s.txt",
            ],
        );
        write(dir, "dir/deep/x.yaml", "changed\n");
        write(dir, "new/dir/n.txt", "n\n");
        std::fs::remove_dir_all(dir.join("gone")).unwrap();
        std::fs::remove_file(dir.join("todir")).unwrap();
        write(dir, "todir/t.txt", "t\n");
        std::fs::remove_dir_all(dir.join("tofile")).unwrap();
        write(dir, "tofile", "now a file\n");
        git(dir, &["add", "-A"]);
        git(dir, &["update-index", "--chmod=+x", "mode.sh"]);
        git(dir, &["commit", "-q", "-m", "topic"]);
        // Staged on top: an edit in a nested directory and a removal.
        write(dir, "dir/y.yaml", "staged\n");
        git(dir, &["add", "dir/y.yaml"]);
        git(dir, &["rm", "-q", "keep/k.txt"]);

        let repo = Repository::open(dir).unwrap();
        assert!(worktree_pathspec(&repo, false).unwrap().plain_entries);
        let base = repo
            .revparse_single("HEAD~1")
            .unwrap()
            .peel_to_tree()
            .unwrap();
        let mut index = repo.index().unwrap();
        let mut paths = staged_paths(&repo, &base, &mut index).expect("the fast path");
        paths.sort();
        let shown: Vec<String> = paths
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        assert_eq!(
            shown,
            [
                "dir/deep/x.yaml",
                "dir/y.yaml",
                "gone",
                "keep",
                "mode.sh",
                "new",
                "todir",
                "tofile"
            ]
        );
        // Nothing was written to the repository: the staged tree is not in it, and the index
        // cache holds no tree it lacks (a second call takes the fast path again).
        let staged_tree = index.write_tree_to(&repo_in_memory(&repo)).unwrap();
        assert!(repo.find_tree(staged_tree).is_err());
        index.read(true).unwrap();
        assert!(staged_paths(&repo, &base, &mut index).is_some());
        assert_same_as_full_walk_from(dir, "HEAD~1", true);
        // Against HEAD only the staged changes remain; against the index's own tree nothing.
        let head = repo.head().unwrap().peel_to_tree().unwrap();
        let mut at_head = staged_paths(&repo, &head, &mut index).unwrap();
        at_head.sort();
        assert_eq!(at_head, [b"dir/y.yaml".to_vec(), b"keep".to_vec()]);
        assert_same_as_full_walk_from(dir, "HEAD", true);
        git(dir, &["commit", "-q", "-m", "staged"]);
        let mut index = repo.index().unwrap();
        index.read(true).unwrap();
        let head = repo.head().unwrap().peel_to_tree().unwrap();
        assert_eq!(staged_paths(&repo, &head, &mut index), Some(Vec::new()));
        assert_same_as_full_walk_from(dir, "HEAD~2", true);
    }

    fn repo_in_memory(repo: &Repository) -> Repository {
        let odb = git2::Odb::new().unwrap();
        odb.add_new_mempack_backend(1000).unwrap();
        odb.add_disk_alternate(repo.commondir().join("objects").to_str().unwrap())
            .unwrap();
        Repository::from_odb(odb).unwrap()
    }
}
