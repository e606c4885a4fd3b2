//! infx-git: the git access infx needs, through libgit2 (no `git` subprocess, no network).
//!
//! Open a repository, resolve revisions and the base of a change (merge-base with the upstream
//! branch by default), read a blob at a revision (layout-aware for the `inferencex-e2e/` move),
//! walk the first-parent commits that touched a path, and diff two versions of one file into
//! added and deleted lines using real diff line origins.
//!
//! Errors are [`GitError`]s (code + message + fix hint); they convert into a `Diagnostic` for
//! reporting. The base of a change has one resolution for every command,
//! [`Repo::resolve_change_base`], whose faults are [`BaseError`]s (docs/diff.md, "Base").

pub mod codes;

use git2::{DiffOptions, ObjectType, Patch, Repository};
use infx_report::{Code, Diagnostic};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod base;

pub use base::{BaseError, BaseFault, BaseSource, DEFAULT_UPSTREAMS, EMPTY_TREE, ResolvedBase};
pub use git2::Oid;

/// The directory the benchmark tree moved into (Oct layout); paths are probed there first.
pub const NESTED_ROOT: &str = "inferencex-e2e";

/// A git failure a user can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitError {
    /// What failed, as its registered code (`git/object`, …).
    pub code: Code,
    pub message: String,
    pub help: Option<String>,
}

impl GitError {
    fn new(code: Code, message: impl Into<String>) -> Self {
        GitError {
            code,
            message: message.into(),
            help: None,
        }
    }
    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    pub fn to_diagnostic(&self) -> Diagnostic {
        let d = Diagnostic::error(self.code, self.message.clone());
        match &self.help {
            Some(h) => d.with_help(h.clone()),
            None => d,
        }
    }
}

impl fmt::Display for GitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_with_help(f, &self.message, self.help.as_deref())
    }
}

/// The text of this crate's errors ([`GitError`], [`BaseError`]): the message, then the help in
/// parentheses.
fn write_with_help(f: &mut fmt::Formatter<'_>, message: &str, help: Option<&str>) -> fmt::Result {
    f.write_str(message)?;
    if let Some(h) = help {
        write!(f, " (help: {h})")?;
    }
    Ok(())
}

impl std::error::Error for GitError {}

impl From<GitError> for Diagnostic {
    fn from(e: GitError) -> Self {
        e.to_diagnostic()
    }
}

/// A blob read at a revision.
#[derive(Debug, Clone)]
pub struct Blob {
    pub id: Oid,
    /// The repository path it was found at (after layout probing).
    pub path: String,
    pub data: Vec<u8>,
}

/// One commit of a path's history.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    pub id: Oid,
    /// First parent; `None` for a root commit.
    pub parent: Option<Oid>,
    pub summary: String,
}

/// One line of a diff: its 1-based number in the file it belongs to (old file for deletions,
/// new file for additions) and its content without the line terminator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub line: usize,
    pub content: String,
}

/// Added and deleted lines of one file between two versions, in diff order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineDiff {
    pub added: Vec<DiffLine>,
    pub deleted: Vec<DiffLine>,
}

/// Whether a tree entry's name stays inside the folder it is written to (not `..`, `.git`, a
/// separator or empty).
fn safe_name(name: &str) -> bool {
    !(name.is_empty()
        || name == "."
        || name == ".."
        || name.eq_ignore_ascii_case(".git")
        || name.contains(['/', '\\', '\0']))
}

/// What [`Repo::export_paths`] asks of a blob before it writes it (its path, its id, and a way
/// to its size from the object header, read only if asked): the blob's bytes, when the caller
/// already holds them.
pub type KnownBytes<'a> = dyn Fn(&str, Oid, &dyn Fn() -> Option<u64>) -> Option<Arc<[u8]>> + 'a;

/// What [`Repo::export_tree`] wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ExportStats {
    pub files: usize,
    pub bytes: u64,
    /// Entries not written: submodules, blobs over the limit, unsafe names.
    pub left_out: usize,
}

/// An open repository.
pub struct Repo {
    inner: Repository,
}

impl fmt::Debug for Repo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Repo")
            .field("path", &self.inner.path())
            .finish()
    }
}

fn ge(code: Code, context: impl fmt::Display) -> impl FnOnce(git2::Error) -> GitError {
    move |e| GitError::new(code, format!("{context}: {}", e.message()))
}

impl Repo {
    /// Opens the repository containing `path` (searching parent directories).
    pub fn discover(path: &Path) -> Result<Repo, GitError> {
        Repo::discover_git2(path).map_err(|e| {
            GitError::new(
                codes::OPEN,
                format!(
                    "{} is not inside a git repository: {}",
                    path.display(),
                    e.message()
                ),
            )
            .help("run the command inside a clone of the repository, or pass --repo <dir>")
        })
    }

    /// [`Repo::discover`] with libgit2's own error, for a caller that words the failure
    /// itself: one search-and-open (`Repository::discover` finds the directory, then opens it
    /// again: the config files, HEAD and the object directories read twice). Up through the
    /// parents, across file systems, with no ceiling and no `GIT_DIR`, as `Repository::discover`
    /// searched.
    pub fn discover_git2(path: &Path) -> Result<Repo, git2::Error> {
        no_hash_verification();
        Repository::open_ext(
            path,
            git2::RepositoryOpenFlags::CROSS_FS,
            std::iter::empty::<&std::ffi::OsStr>(),
        )
        .map(|inner| Repo { inner })
    }

    /// Opens exactly the repository at `path` (a work tree or a bare/`.git` directory).
    pub fn open(path: &Path) -> Result<Repo, GitError> {
        no_hash_verification();
        Repository::open(path)
            .map(|inner| Repo { inner })
            .map_err(ge(
                codes::OPEN,
                format!("cannot open git repository {}", path.display()),
            ))
    }

    /// Wraps a repository a caller opened itself (infx-diff keeps its own open error).
    pub fn from_git2(inner: Repository) -> Repo {
        no_hash_verification();
        Repo { inner }
    }

    /// The libgit2 handle, for the diff machinery that lives in infx-diff.
    pub fn git2(&self) -> &Repository {
        &self.inner
    }

    /// The `.git` directory (reopen it with [`Repo::open`] from another thread).
    pub fn git_dir(&self) -> PathBuf {
        self.inner.path().to_path_buf()
    }

    /// The work tree root, if the repository has one.
    pub fn workdir(&self) -> Option<PathBuf> {
        self.inner.workdir().map(Path::to_path_buf)
    }

    pub fn is_shallow(&self) -> bool {
        self.inner.is_shallow()
    }

    /// How many tracked files below `prefix` (repository-relative, ending in `/`) a sparse
    /// checkout keeps out of the work tree (the index's skip-worktree flag); 0 when the index
    /// cannot be read.
    pub fn skip_worktree_count(&self, prefix: &str) -> usize {
        // GIT_INDEX_ENTRY_SKIP_WORKTREE, in the extended flags.
        const SKIP_WORKTREE: u16 = 1 << 14;
        let Ok(index) = self.inner.index() else {
            return 0;
        };
        index
            .iter()
            .filter(|e| {
                e.flags_extended & SKIP_WORKTREE != 0 && e.path.starts_with(prefix.as_bytes())
            })
            .count()
    }

    /// Resolves a revision (`HEAD`, a branch, `origin/main`, a SHA, `HEAD~2`) to a commit.
    pub fn resolve_commit(&self, rev: &str) -> Result<Oid, GitError> {
        let obj = self.inner.revparse_single(rev).map_err(|e| {
            let mut err = GitError::new(codes::REVISION, format!("unknown revision '{rev}': {}", e.message()));
            if self.is_shallow() {
                err = err.help(format!(
                    "this is a shallow clone; fetch more history: git fetch --unshallow (or git fetch origin {rev})"
                ));
            } else {
                err = err.help(format!("fetch it first: git fetch origin {rev}"));
            }
            err
        })?;
        obj.peel_to_commit()
            .map(|c| c.id())
            .map_err(ge(codes::REVISION, format!("'{rev}' is not a commit")))
    }

    /// The full message of a commit (lossy UTF-8), e.g. to look for `[skip-sweep]`.
    pub fn commit_message(&self, id: Oid) -> Result<String, GitError> {
        let c = self
            .inner
            .find_commit(id)
            .map_err(ge(codes::OBJECT, format!("commit {id} not found")))?;
        Ok(String::from_utf8_lossy(c.message_bytes()).into_owned())
    }

    /// The short name of the checked-out branch (`None` when detached or unborn).
    pub fn current_branch(&self) -> Option<String> {
        let head = self.inner.head().ok()?;
        if !head.is_branch() {
            return None;
        }
        head.shorthand().ok().map(str::to_string)
    }

    /// The upstream branch the checked-out branch follows, for telling a merge from upstream
    /// apart (the changelog's merge driver): its configured upstream, else the first of
    /// [`DEFAULT_UPSTREAMS`] that exists. A change's base comes from
    /// [`Repo::resolve_change_base`], never from here.
    pub fn default_upstream(&self) -> Option<String> {
        if let Ok(head) = self.inner.head()
            && head.is_branch()
            && let Ok(name) = head.shorthand()
            && let Ok(branch) = self.inner.find_branch(name, git2::BranchType::Local)
            && let Ok(up) = branch.upstream()
            && let Ok(Some(up_name)) = up.name()
        {
            return Some(up_name.to_string());
        }
        DEFAULT_UPSTREAMS
            .into_iter()
            .find(|r| self.inner.revparse_single(r).is_ok())
            .map(str::to_string)
    }

    /// The root tree of `commit`.
    fn tree_of(&self, commit: Oid) -> Result<git2::Tree<'_>, GitError> {
        self.inner
            .find_commit(commit)
            .map_err(ge(codes::OBJECT, format!("commit {commit} not found")))?
            .tree()
            .map_err(ge(codes::OBJECT, format!("tree of {commit} not readable")))
    }

    /// The blob at `path` in `commit`, or `None` when the path does not exist there.
    pub fn blob_at(&self, commit: Oid, path: &str) -> Result<Option<Blob>, GitError> {
        let tree = self.tree_of(commit)?;
        let entry = match tree.get_path(Path::new(path)) {
            Ok(e) => e,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => {
                return Err(GitError::new(
                    codes::OBJECT,
                    format!("{path} at {commit}: {}", e.message()),
                ));
            }
        };
        if entry.kind() != Some(ObjectType::Blob) {
            return Ok(None);
        }
        let blob = self.inner.find_blob(entry.id()).map_err(ge(
            codes::OBJECT,
            format!("blob {path} at {commit} not readable"),
        ))?;
        Ok(Some(Blob {
            id: blob.id(),
            path: path.to_string(),
            data: blob.content().to_vec(),
        }))
    }

    /// The blob id at `path` in `commit` without reading the content.
    pub fn blob_id_at(&self, commit: Oid, path: &str) -> Result<Option<Oid>, GitError> {
        let tree = self.tree_of(commit)?;
        match tree.get_path(Path::new(path)) {
            Ok(e) if e.kind() == Some(ObjectType::Blob) => Ok(Some(e.id())),
            Ok(_) => Ok(None),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(GitError::new(
                codes::OBJECT,
                format!("{path} at {commit}: {}", e.message()),
            )),
        }
    }

    /// The tree of `commit` below `subdir` (repository-relative, `""` = all); `None` when
    /// the commit has no such folder.
    fn subtree(&self, commit: Oid, subdir: &str) -> Result<Option<git2::Tree<'_>>, GitError> {
        let tree = self.tree_of(commit)?;
        if subdir.is_empty() {
            return Ok(Some(tree));
        }
        let entry = match tree.get_path(Path::new(subdir)) {
            Ok(e) => e,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(ge(codes::OBJECT, format!("{subdir} at {commit}"))(e)),
        };
        self.inner.find_tree(entry.id()).map(Some).map_err(ge(
            codes::OBJECT,
            format!("{subdir} at {commit} is not a folder"),
        ))
    }

    /// Writes one entry at `path` as a checkout would: a folder, a regular file with its bytes,
    /// a link as a link (a reader's confinement decides where it may lead); a submodule or a
    /// blob over `max_blob` bytes is left out.
    fn write_entry(
        &self,
        entry: &git2::TreeEntry<'_>,
        path: &Path,
        max_blob: u64,
        stats: &mut ExportStats,
    ) -> Result<(), String> {
        match entry.kind() {
            Some(ObjectType::Tree) => std::fs::create_dir(path)
                .or_else(|e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => Ok(()),
                    _ => Err(e),
                })
                .map_err(|e| e.to_string()),
            // The object's header says its size: a blob over the limit is never inflated
            // (a hostile tree's huge blob would otherwise be read whole; docs/security.md).
            Some(ObjectType::Blob) if self.blob_size(entry.id()).is_some_and(|n| n > max_blob) => {
                stats.left_out += 1;
                Ok(())
            }
            Some(ObjectType::Blob) => match self.inner.find_blob(entry.id()) {
                Ok(blob) if blob.size() as u64 > max_blob => {
                    stats.left_out += 1;
                    Ok(())
                }
                Ok(blob) if entry.filemode() == 0o120000 => {
                    let target = String::from_utf8_lossy(blob.content()).into_owned();
                    stats.files += 1;
                    std::os::unix::fs::symlink(target, path).map_err(|e| e.to_string())
                }
                Ok(blob) => {
                    stats.files += 1;
                    stats.bytes += blob.size() as u64;
                    std::fs::write(path, blob.content()).map_err(|e| e.to_string())
                }
                Err(e) => Err(e.message().to_string()),
            },
            // Submodules (commits) have no content in this repository.
            _ => {
                stats.left_out += 1;
                Ok(())
            }
        }
    }

    /// Writes the files of `commit`'s tree below `subdir` (repository-relative, `""` = all)
    /// into `dest`, as a checkout would lay them out ([`Self::write_entry`]). An entry whose
    /// name could leave `dest` (`..`, `.git`, a separator) is left out too: the base is
    /// history, but history is input (docs/security.md). Only the files `keep` accepts (by
    /// their path below `subdir` and their blob id) are written.
    pub fn export_tree(
        &self,
        commit: Oid,
        subdir: &str,
        dest: &Path,
        max_blob: u64,
        keep: &dyn Fn(&str, Oid) -> bool,
    ) -> Result<ExportStats, GitError> {
        let Some(tree) = self.subtree(commit, subdir)? else {
            return Ok(ExportStats::default());
        };
        let mut stats = ExportStats::default();
        let mut failed: Option<GitError> = None;
        let walked = tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            let Some(name) = entry.name().ok().filter(|n| safe_name(n)) else {
                stats.left_out += 1;
                return git2::TreeWalkResult::Skip;
            };
            if !dir.split('/').filter(|c| !c.is_empty()).all(safe_name) {
                stats.left_out += 1;
                return git2::TreeWalkResult::Skip;
            }
            if entry.kind() == Some(ObjectType::Blob) && !keep(&format!("{dir}{name}"), entry.id())
            {
                return git2::TreeWalkResult::Ok;
            }
            match self.write_entry(entry, &dest.join(dir).join(name), max_blob, &mut stats) {
                Ok(()) => git2::TreeWalkResult::Ok,
                Err(e) => {
                    failed = Some(GitError::new(
                        codes::OBJECT,
                        format!("cannot write {dir}{name} of {commit}: {e}"),
                    ));
                    git2::TreeWalkResult::Abort
                }
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        walked.map_err(ge(codes::OBJECT, format!("tree of {commit}")))?;
        Ok(stats)
    }

    /// [`Self::export_tree`] of just `paths` (below `subdir`, `/`-separated): each that
    /// `commit` has is written with the folders above it, the others are skipped. `known`
    /// hears of each regular file's blob before it is written ([`KnownBytes`]) and may hand
    /// back bytes it holds that are that blob's: those are written, and the object database is
    /// not asked (a tree-wide move exports thousands of blobs the change already read;
    /// docs/performance.md, "Renames"). A path with an unsafe component is left out.
    /// One look-up per path instead of a walk of every folder: a tree of a few hundred
    /// folders cost the baseline's export more than its few files (docs/baseline.md, "Cost").
    pub fn export_paths<'p>(
        &self,
        commit: Oid,
        subdir: &str,
        dest: &Path,
        max_blob: u64,
        paths: impl IntoIterator<Item = &'p str>,
        known: &KnownBytes<'_>,
    ) -> Result<ExportStats, GitError> {
        let mut stats = ExportStats::default();
        let Some(tree) = self.subtree(commit, subdir)? else {
            return Ok(stats);
        };
        std::fs::create_dir_all(dest)
            .map_err(|e| GitError::new(codes::OBJECT, format!("cannot write the export: {e}")))?;
        let mut made: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
        for rel in paths {
            if !rel.split('/').all(safe_name) {
                stats.left_out += 1;
                continue;
            }
            let Ok(entry) = tree.get_path(Path::new(rel)) else {
                continue;
            };
            let to = dest.join(rel);
            let failed = |e: String| {
                GitError::new(
                    codes::OBJECT,
                    format!("cannot write {rel} of {commit}: {e}"),
                )
            };
            // Each folder once: thousands of files share a few hundred folders.
            if let Some(dir) = to.parent()
                && !made.contains(dir)
            {
                std::fs::create_dir_all(dir).map_err(|e| failed(e.to_string()))?;
                made.insert(dir.to_path_buf());
            }
            let regular = entry.kind() == Some(ObjectType::Blob) && entry.filemode() != 0o120000;
            let size = || self.blob_size(entry.id());
            let held = regular
                .then(|| known(rel, entry.id(), &size))
                .flatten()
                .filter(|bytes| bytes.len() as u64 <= max_blob);
            match held {
                Some(bytes) => {
                    stats.files += 1;
                    stats.bytes += bytes.len() as u64;
                    std::fs::write(&to, &bytes[..]).map_err(|e| failed(e.to_string()))?;
                }
                None => self
                    .write_entry(&entry, &to, max_blob, &mut stats)
                    .map_err(failed)?,
            }
        }
        Ok(stats)
    }

    /// A blob's size from its object header, without inflating it; `None` when unreadable.
    pub fn blob_size(&self, id: Oid) -> Option<u64> {
        let odb = self.inner.odb().ok()?;
        let (size, kind) = odb.read_header(id).ok()?;
        (kind == ObjectType::Blob).then_some(size as u64)
    }

    /// Reads a blob by id.
    pub fn blob(&self, id: Oid) -> Result<Vec<u8>, GitError> {
        self.inner
            .find_blob(id)
            .map(|b| b.content().to_vec())
            .map_err(ge(codes::OBJECT, format!("blob {id} not readable")))
    }

    /// Layout-aware read: a leading `inferencex-e2e/` is stripped from `path`, then
    /// `inferencex-e2e/<path>` is probed first and `<path>` second (upstream `git_path_at_ref`).
    pub fn blob_at_layout(&self, commit: Oid, path: &str) -> Result<Option<Blob>, GitError> {
        probe_layout(path, |candidate| self.blob_at(commit, candidate))
    }

    /// The bytes [`Self::blob_at_layout`] finds, in its order of candidates, where `held`
    /// answers a candidate path with the bytes the caller already holds for it at `commit`:
    /// then the object database is not read (a tree-wide move asks for thousands).
    pub fn bytes_at_layout(
        &self,
        commit: Oid,
        path: &str,
        held: &dyn Fn(&str) -> Option<Vec<u8>>,
    ) -> Result<Option<Vec<u8>>, GitError> {
        probe_layout(path, |candidate| match held(candidate) {
            Some(data) => Ok(Some(data)),
            None => Ok(self.blob_at(commit, candidate)?.map(|b| b.data)),
        })
    }

    /// The first-parent history of `head` (oldest first) restricted to commits whose version
    /// of `path` differs from their first parent's (what `git log --first-parent -- path` lists).
    pub fn commits_touching(&self, head: Oid, path: &str) -> Result<Vec<CommitInfo>, GitError> {
        let mut out = Vec::new();
        let mut cur = Some(
            self.inner
                .find_commit(head)
                .map_err(ge(codes::OBJECT, format!("commit {head} not found")))?,
        );
        while let Some(c) = cur {
            let parent = c.parents().next();
            let mine = self.blob_id_at(c.id(), path)?;
            let theirs = match &parent {
                Some(p) => self.blob_id_at(p.id(), path)?,
                None => None,
            };
            if mine != theirs {
                out.push(CommitInfo {
                    id: c.id(),
                    parent: parent.as_ref().map(|p| p.id()),
                    summary: c.summary().ok().flatten().unwrap_or("").to_string(),
                });
            }
            cur = parent;
        }
        out.reverse();
        Ok(out)
    }
}

/// Objects are read from the local repository without re-hashing them (as the `git` CLI
/// does); libgit2's default re-hashes every object read, which dominated history replays.
/// Set up for every repository handle this crate makes (all three `Repo` constructors), and
/// counted.
fn no_hash_verification() {
    REPOSITORIES_OPENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    git2::opts::strict_hash_verification(false);
}

static REPOSITORIES_OPENED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many repository handles this process has made. Opening one reads the config files and
/// maps every pack index, so validate holds a run to a few (docs/performance.md, "One
/// repository handle").
pub fn repositories_opened() -> usize {
    REPOSITORIES_OPENED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The first of [`layout_candidates`] that `find` finds something at (an error stops the probe).
fn probe_layout<T>(
    path: &str,
    mut find: impl FnMut(&str) -> Result<Option<T>, GitError>,
) -> Result<Option<T>, GitError> {
    for candidate in layout_candidates(path) {
        if let Some(found) = find(&candidate)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// The repository paths probed for `path`, nested layout first.
pub fn layout_candidates(path: &str) -> Vec<String> {
    let p = path.trim_start_matches("./");
    let p = p.strip_prefix(&format!("{NESTED_ROOT}/")).unwrap_or(p);
    vec![format!("{NESTED_ROOT}/{p}"), p.to_string()]
}

/// The added and deleted lines between two versions of one file, computed like
/// `git diff` (Myers with the indent heuristic, which is git's default). `None` = the file
/// does not exist on that side. Comparing blobs, not trees, makes a pure move an empty diff.
pub fn diff_lines(old: Option<&[u8]>, new: Option<&[u8]>) -> Result<LineDiff, GitError> {
    // A missing side diffs as an empty one (libgit2's buffers below).
    if let Some(region) = one_region(old.unwrap_or(b""), new.unwrap_or(b""))
        && !region.old_slides
        && !region.new_slides
    {
        let lines = |stretch| {
            (region.first..)
                .zip(records(stretch))
                .map(|(line, content)| DiffLine {
                    line,
                    content: String::from_utf8_lossy(strip_eol(content)).into_owned(),
                })
                .collect()
        };
        return Ok(LineDiff {
            added: lines(region.new),
            deleted: lines(region.old),
        });
    }
    libgit2_diff_lines(old, new)
}

/// [`diff_lines`] as libgit2 computes it, without the append shortcut.
fn libgit2_diff_lines(old: Option<&[u8]>, new: Option<&[u8]>) -> Result<LineDiff, GitError> {
    let mut opts = DiffOptions::new();
    opts.indent_heuristic(true).context_lines(3);
    let patch = Patch::from_buffers(
        old.unwrap_or(b""),
        None,
        new.unwrap_or(b""),
        None,
        Some(&mut opts),
    )
    .map_err(ge(codes::DIFF, "cannot diff the two versions"))?;
    let mut out = LineDiff::default();
    for h in 0..patch.num_hunks() {
        let n = patch
            .num_lines_in_hunk(h)
            .map_err(ge(codes::DIFF, "bad hunk"))?;
        for l in 0..n {
            let line = patch
                .line_in_hunk(h, l)
                .map_err(ge(codes::DIFF, "bad diff line"))?;
            let content = strip_eol(line.content());
            match line.origin() {
                '+' => out.added.push(DiffLine {
                    line: line.new_lineno().unwrap_or(0) as usize,
                    content: String::from_utf8_lossy(content).into_owned(),
                }),
                '-' => out.deleted.push(DiffLine {
                    line: line.old_lineno().unwrap_or(0) as usize,
                    content: String::from_utf8_lossy(content).into_owned(),
                }),
                _ => {}
            }
        }
    }
    Ok(out)
}

/// The one stretch of lines two texts differ in, when git's diff can only mark it whole
/// (docs/diff.md, "What is checked"). Lines are git's records: each with its newline, the last
/// one without when the text does not end in one.
pub struct Region<'a> {
    /// The 1-based number of the stretch's first line, the same on both sides (the lines
    /// above are the texts' common prefix).
    pub first: usize,
    /// The stretch in each text: the old one's lines deleted, the new one's added.
    pub old: &'a [u8],
    pub new: &'a [u8],
    /// Whether git could slide the stretch of that side to other lines (its first line equal
    /// to the line below it, or its last to the line above it): then the indent heuristic
    /// chooses where, and only libgit2 knows.
    pub old_slides: bool,
    pub new_slides: bool,
}

fn records(t: &[u8]) -> std::slice::SplitInclusive<'_, u8, impl FnMut(&u8) -> bool> {
    t.split_inclusive(|&b| b == b'\n')
}

/// Where `old` and `new` differ, when that is one stretch git's xdiff cannot match any line of
/// (`None`: libgit2 diffs them). Exact: xdiff trims the common prefix and suffix of whole
/// lines, marks every line of the middle that equals no line of the other side's middle as
/// changed without diffing it, and then only slides a changed block while the line beside it
/// equals the block's line at the far end ([`Region::new_slides`]). Spares hashing and diffing
/// two whole files for a one-line edit of a master config or an appended changelog entry.
pub fn one_region<'a>(old: &'a [u8], new: &'a [u8]) -> Option<Region<'a>> {
    let shared = old.len().min(new.len());
    let differs = common_prefix(old, new);
    // The common prefix ends at a line start of both (their bytes agree up to `differs`).
    let p = memchr::memrchr(b'\n', &old[..differs]).map_or(0, |k| k + 1);
    // The common suffix, never reaching into the prefix (xdiff's limit), from a line start
    // of both texts.
    let same_tail = common_suffix(old, new, shared - p);
    let (mut qo, mut qn) = (old.len() - same_tail, new.len() - same_tail);
    let line_start = |t: &[u8], q: usize| q == 0 || t.get(q - 1) == Some(&b'\n');
    if !(line_start(old, qo) && line_start(new, qn)) {
        match memchr::memchr(b'\n', &old[qo..]) {
            Some(k) => (qo, qn) = (qo + k + 1, qn + k + 1),
            None => (qo, qn) = (old.len(), new.len()),
        }
    }
    let (old_mid, new_mid) = (&old[p..qo], &new[p..qn]);
    if !old_mid.is_empty() && !new_mid.is_empty() {
        let deleted: std::collections::HashSet<&[u8]> = records(old_mid).collect();
        if records(new_mid).any(|l| deleted.contains(l)) {
            return None;
        }
    }
    let (above, below) = (records(&old[..p]).next_back(), records(&old[qo..]).next());
    let slides = |mid: &[u8]| {
        let (top, bottom) = (records(mid).next(), records(mid).next_back());
        !mid.is_empty()
            && ((above.is_some() && above == bottom) || (below.is_some() && below == top))
    };
    Some(Region {
        first: memchr::memchr_iter(b'\n', &old[..p]).count() + 1,
        old: old_mid,
        new: new_mid,
        old_slides: slides(old_mid),
        new_slides: slides(new_mid),
    })
}

/// Compared as slices, which the compiler turns into `memcmp`, before byte by byte: comparing
/// two 300 KB texts a byte at a time was most of [`one_region`]'s time.
const BLOCK: usize = 4096;

/// How many leading bytes `a` and `b` share.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

/// How many trailing bytes `a` and `b` share, at most `limit` (at most the shorter's length).
fn common_suffix(a: &[u8], b: &[u8], limit: usize) -> usize {
    let (a_end, b_end) = (a.len(), b.len());
    let mut i = 0;
    while i + BLOCK <= limit && a[a_end - i - BLOCK..a_end - i] == b[b_end - i - BLOCK..b_end - i] {
        i += BLOCK;
    }
    let (a, b) = (&a[..a_end - i], &b[..b_end - i]);
    i + a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(limit - i)
        .take_while(|(x, y)| x == y)
        .count()
}

/// The 1-based numbers of `new`'s lines that git's diff counts as added against `old`, when
/// [`one_region`] knows them (`None`: ask libgit2).
pub fn shortcut_added_lines(old: &[u8], new: &[u8]) -> Option<Vec<usize>> {
    let region = one_region(old, new).filter(|r| !r.new_slides)?;
    // git's records: each line with its newline, and a last one without (memchr, not the
    // split's byte loop: a change of many new files counts every line of each).
    let lines = memchr::memchr_iter(b'\n', region.new).count()
        + usize::from(!region.new.is_empty() && !region.new.ends_with(b"\n"));
    Some((region.first..region.first + lines).collect())
}

fn strip_eol(b: &[u8]) -> &[u8] {
    let b = b.strip_suffix(b"\n").unwrap_or(b);
    b.strip_suffix(b"\r").unwrap_or(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines libgit2 counts as added, as the change's fallback runs it (no context), with
    /// or without git's default indent heuristic (which may slide a block to a blank line or an
    /// indentation change).
    fn libgit2_added(old: &[u8], new: &[u8], heuristic: bool) -> Vec<usize> {
        let mut opts = DiffOptions::new();
        opts.force_text(true)
            .context_lines(0)
            .interhunk_lines(0)
            .indent_heuristic(heuristic);
        let mut added = Vec::new();
        let Ok(patch) = Patch::from_buffers(old, None, new, None, Some(&mut opts)) else {
            return vec![usize::MAX];
        };
        for h in 0..patch.num_hunks() {
            for l in 0..patch.num_lines_in_hunk(h).unwrap_or(0) {
                if let Ok(line) = patch.line_in_hunk(h, l)
                    && line.origin() == '+'
                {
                    added.extend(line.new_lineno().map(|n| n as usize));
                }
            }
        }
        added
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        /// The one-region shortcut gives libgit2's added lines whenever it answers, for any
        /// stretch replaced anywhere (an append, an insertion, a deletion, an edit, at either
        /// end, unterminated last lines on either side); `diff_lines` with it gives what
        /// libgit2 gives, contents and all.
        #[test]
        fn one_region_is_libgit2s(
            old in proptest::collection::vec("(a|b| |  a|)\\r?\n", 0..9),
            at in 0usize..10,
            cut in 0usize..4,
            put in proptest::collection::vec("(a|b|c| |  a|  c|)\\r?\n", 0..5),
            old_end in proptest::option::of("(a|c| )"),
            new_end in proptest::option::of("(a|c| )"),
            pad in 0usize..1400,
        ) {
            // Lines above and below the edit, sometimes more than a block of bytes
            // (`common_prefix`, `common_suffix`).
            let mut old = old;
            let (top, bottom) = (pad % 700, pad / 2);
            old.splice(0..0, (0..top).map(|i| format!("k{i}: v\n")));
            old.extend((0..bottom).map(|i| format!("z{i}: w\n")));
            let at = (at + top).min(old.len());
            let cut = cut.min(old.len() - at);
            let mut new_lines = old.clone();
            new_lines.splice(at..at + cut, put);
            let (mut old, mut new) = (old.concat(), new_lines.concat());
            old.extend(old_end.clone());
            // Mostly the same unterminated last line on both sides, sometimes another.
            new.extend(if at % 3 == 0 { new_end } else { old_end });
            let (old, new) = (old.as_bytes(), new.as_bytes());
            let fail = |e: GitError| proptest::test_runner::TestCaseError::fail(e.to_string());
            let full = libgit2_diff_lines(Some(old), Some(new)).map_err(fail)?;
            proptest::prop_assert_eq!(&diff_lines(Some(old), Some(new)).map_err(fail)?, &full);
            if old.is_empty() {
                proptest::prop_assert_eq!(
                    diff_lines(None, Some(new)).map_err(fail)?,
                    libgit2_diff_lines(None, Some(new)).map_err(fail)?
                );
            }
            let Some(fast) = shortcut_added_lines(old, new) else {
                return Ok(());
            };
            for heuristic in [false, true] {
                proptest::prop_assert_eq!(&fast, &libgit2_added(old, new, heuristic), "{:?} -> {:?}", old, new);
            }
            let full_lines: Vec<usize> = full.added.iter().map(|l| l.line).collect();
            proptest::prop_assert_eq!(&fast, &full_lines);
        }
    }

    #[test]
    fn one_region_answers_the_usual_edits() {
        let old = "- a: 1\n  b: x\n";
        let new = "- a: 1\n  b: x\n- a: 2\n  b: y \n";
        assert_eq!(
            shortcut_added_lines(old.as_bytes(), new.as_bytes()),
            Some(vec![3, 4])
        );
        // One value edited in the middle of a config: the line alone, the rest not diffed.
        let old = "a:\n  image: x:1\n  tp: 4\nb:\n  image: y:1\n";
        let new = "a:\n  image: x:2\n  tp: 4\nb:\n  image: y:1\n";
        assert_eq!(
            shortcut_added_lines(old.as_bytes(), new.as_bytes()),
            Some(vec![2])
        );
        let region = one_region(old.as_bytes(), new.as_bytes());
        assert!(region.is_some_and(
            |r| (r.first, r.old, r.new) == (2, &b"  image: x:1\n"[..], &b"  image: x:2\n"[..])
        ));
        // A line deleted: nothing added.
        assert_eq!(shortcut_added_lines(b"a\nb\nc\n", b"a\nc\n"), Some(vec![]));
        // The block could slide up a line: libgit2 decides.
        assert_eq!(shortcut_added_lines(b"x\ny\n", b"x\ny\nz\ny\n"), None);
        assert_eq!(shortcut_added_lines(b"x\n", b"x\nx\n"), None);
        // An insertion before the first line, which cannot slide.
        assert_eq!(shortcut_added_lines(b"x\n", b"y\nx\n"), Some(vec![1]));
        // A line the old stretch has too: xdiff may match it.
        assert_eq!(shortcut_added_lines(b"a\nb\nc\n", b"a\nc\nb\nd\n"), None);
        // A new file: every line, the unterminated last one too.
        assert_eq!(shortcut_added_lines(b"", b"a\n\nb"), Some(vec![1, 2, 3]));
        assert_eq!(shortcut_added_lines(b"", b""), Some(vec![]));
    }

    fn git(dir: &Path, args: &[&str]) -> String {
        let mut full = vec![
            "-C",
            dir.to_str().unwrap_or("."),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
        ];
        full.extend_from_slice(args);
        duct::cmd("git", full)
            .stderr_null()
            .read()
            .unwrap_or_default()
    }

    fn repo_with_history() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        git(d.path(), &["init", "-q", "-b", "main"]);
        std::fs::write(d.path().join("f.yaml"), "a\nb\n").unwrap();
        git(d.path(), &["add", "f.yaml"]);
        git(d.path(), &["commit", "-q", "-m", "one"]);
        std::fs::write(d.path().join("other"), "x").unwrap();
        git(d.path(), &["add", "other"]);
        git(d.path(), &["commit", "-q", "-m", "unrelated"]);
        std::fs::write(d.path().join("f.yaml"), "a\nb\nc\n").unwrap();
        git(d.path(), &["add", "f.yaml"]);
        git(d.path(), &["commit", "-q", "-m", "three"]);
        d
    }

    #[test]
    fn reads_blobs_and_walks_history() {
        let d = repo_with_history();
        let r = Repo::discover(d.path()).unwrap();
        let head = r.resolve_commit("HEAD").unwrap();
        let b = r.blob_at(head, "f.yaml").unwrap().unwrap();
        assert_eq!(b.data, b"a\nb\nc\n");
        assert!(r.blob_at(head, "missing").unwrap().is_none());
        let hist = r.commits_touching(head, "f.yaml").unwrap();
        let subjects: Vec<_> = hist.iter().map(|c| c.summary.as_str()).collect();
        assert_eq!(subjects, ["one", "three"]);
        assert!(hist[0].parent.is_none());
        let first = r.resolve_commit("HEAD~2").unwrap();
        let ups = ["main".to_string()];
        let explicit = r.resolve_change_base(Some("HEAD~1"), &ups, Some(head));
        assert_eq!(
            explicit.unwrap().commit,
            Some(r.resolve_commit("HEAD~1").unwrap())
        );
        let dotted = r.resolve_change_base(Some("HEAD~2..."), &ups, Some(head));
        assert_eq!(dotted.unwrap().commit, Some(first));
        let by_upstream = r.resolve_change_base(None, &ups, Some(first)).unwrap();
        assert_eq!(by_upstream.commit, Some(first));
        assert_eq!(
            by_upstream.source,
            BaseSource::MergeBase {
                upstream: "main".into()
            }
        );
    }

    #[test]
    fn change_base_covers_unborn_empty_tree_and_missing_upstreams() {
        let unborn = tempfile::tempdir().unwrap();
        git(unborn.path(), &["init", "-q", "-b", "main"]);
        let r = Repo::discover(unborn.path()).unwrap();
        assert_eq!(r.head_commit().unwrap(), None);
        let ups: Vec<String> = DEFAULT_UPSTREAMS.map(String::from).to_vec();
        let b = r.resolve_change_base(None, &ups, None).unwrap();
        assert_eq!(
            (b.commit, b.tree, b.source),
            (None, None, BaseSource::UnbornHead)
        );
        let e = r
            .resolve_change_base(Some("main..."), &ups, None)
            .unwrap_err();
        assert_eq!(e.code(), crate::codes::BASE_NOT_FOUND);

        let d = repo_with_history();
        let r = Repo::discover(d.path()).unwrap();
        let head = r.head_commit().unwrap();
        let b = r.resolve_change_base(Some(EMPTY_TREE), &ups, head).unwrap();
        assert_eq!((b.commit, b.tree), (None, None));
        let e = r
            .resolve_change_base(None, &["origin/main".to_string()], head)
            .unwrap_err();
        assert_eq!(
            (e.fault, e.code()),
            (BaseFault::NotFound, crate::codes::BASE_NOT_FOUND)
        );
        // An unrelated history shares no merge-base with HEAD.
        git(d.path(), &["checkout", "-q", "--orphan", "other"]);
        git(d.path(), &["commit", "-q", "-m", "unrelated root"]);
        let r = Repo::discover(d.path()).unwrap();
        let head = r.head_commit().unwrap();
        let e = r.resolve_change_base(None, &ups, head).unwrap_err();
        assert_eq!(e.code(), crate::codes::NO_MERGE_BASE);
        assert!(e.help.is_some());
    }

    #[test]
    fn layout_probe_prefers_nested() {
        let d = repo_with_history();
        std::fs::create_dir(d.path().join(NESTED_ROOT)).unwrap();
        std::fs::write(d.path().join(NESTED_ROOT).join("f.yaml"), "nested\n").unwrap();
        git(d.path(), &["add", "."]);
        git(d.path(), &["commit", "-q", "-m", "nest"]);
        let r = Repo::discover(d.path()).unwrap();
        let head = r.resolve_commit("HEAD").unwrap();
        let b = r
            .blob_at_layout(head, "inferencex-e2e/f.yaml")
            .unwrap()
            .unwrap();
        assert_eq!(b.path, "inferencex-e2e/f.yaml");
        assert_eq!(b.data, b"nested\n");
        let old = r.resolve_commit("HEAD~1").unwrap();
        assert_eq!(
            r.blob_at_layout(old, "f.yaml").unwrap().unwrap().path,
            "f.yaml"
        );
    }

    #[test]
    fn unknown_revision_is_an_error_with_help() {
        let d = repo_with_history();
        let r = Repo::discover(d.path()).unwrap();
        let e = r.resolve_commit("nope").unwrap_err();
        assert_eq!(e.code, codes::REVISION);
        assert!(e.help.is_some());
    }

    #[test]
    fn diff_lines_uses_origins_and_line_numbers() {
        let d = diff_lines(Some(b"a\nb\nc\n"), Some(b"a\n++x\nc\nd\n")).unwrap();
        assert_eq!(
            d.deleted,
            vec![DiffLine {
                line: 2,
                content: "b".into()
            }]
        );
        assert_eq!(
            d.added,
            vec![
                DiffLine {
                    line: 2,
                    content: "++x".into()
                },
                DiffLine {
                    line: 4,
                    content: "d".into()
                }
            ]
        );
        // A missing final newline makes the last line change.
        let d = diff_lines(Some(b"a\nb"), Some(b"a\nb\nc\n")).unwrap();
        assert_eq!(d.deleted.len(), 1);
        assert_eq!(d.added.len(), 2);
        let d = diff_lines(None, Some(b"x\n")).unwrap();
        assert_eq!(d.added.len(), 1);
        assert!(
            diff_lines(Some(b"same\n"), Some(b"same\n"))
                .unwrap()
                .added
                .is_empty()
        );
    }

    #[test]
    fn shallow_clone_missing_base_says_how_to_fix() {
        let d = repo_with_history();
        let shallow = tempfile::tempdir().unwrap();
        let src = format!("file://{}", d.path().display());
        let dst = shallow.path().join("c");
        duct::cmd(
            "git",
            ["clone", "-q", "--depth", "1", &src, dst.to_str().unwrap()],
        )
        .stderr_null()
        .run()
        .unwrap();
        let r = Repo::open(&dst).unwrap();
        assert!(r.is_shallow());
        let e = r.resolve_commit("HEAD~2").unwrap_err();
        assert!(e.help.unwrap_or_default().contains("git fetch --unshallow"));
        let head = r.head_commit().unwrap();
        let e = r
            .resolve_change_base(Some("HEAD~2"), &[], head)
            .unwrap_err();
        assert_eq!(e.code(), crate::codes::SHALLOW);
    }

    /// The export writes the bytes its caller holds for a blob without asking the object
    /// database (not even for the size), and reads the others from git.
    #[test]
    fn export_paths_writes_held_bytes() {
        let d = repo_with_history();
        let r = Repo::discover(d.path()).unwrap();
        let head = r.resolve_commit("HEAD").unwrap();
        let out = tempfile::tempdir().unwrap();
        let sized = std::cell::Cell::new(Vec::<String>::new());
        let known = |rel: &str, _: Oid, size: &dyn Fn() -> Option<u64>| {
            if rel == "f.yaml" {
                return Some(Arc::<[u8]>::from(&b"a\nb\nc\n"[..]));
            }
            let mut v = sized.take();
            v.push(format!("{rel}:{:?}", size()));
            sized.set(v);
            None
        };
        let stats = r
            .export_paths(
                head,
                "",
                out.path(),
                1 << 20,
                ["f.yaml", "other", "missing"],
                &known,
            )
            .unwrap();
        assert_eq!(stats.files, 2);
        assert_eq!(
            std::fs::read(out.path().join("f.yaml")).unwrap(),
            b"a\nb\nc\n"
        );
        assert_eq!(std::fs::read(out.path().join("other")).unwrap(), b"x");
        assert!(!out.path().join("missing").exists());
        assert_eq!(sized.take(), ["other:Some(1)"]);
    }
}
