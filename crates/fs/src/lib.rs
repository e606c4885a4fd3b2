//! infx-fs: the one way infx reads a repository tree. A pull request's tree is hostile input
//! in CI (docs/security.md), so every read and every directory walk goes through here:
//!
//! - **Confinement.** After [`confine_to`], a path whose resolved form (all symlinks followed)
//!   leaves the registered root is refused (`fs/outside-root`) before anything is opened; the
//!   error names the link, never the content.
//! - **Regular files only.** FIFOs, sockets, devices and directories are refused from their
//!   metadata, before `open` (`fs/not-regular`): a FIFO would block `open` forever.
//! - **Limits.** One file may hold at most [`MAX_FILE_BYTES`] (`fs/too-large`); one process
//!   reads at most [`TOTAL_READ_BUDGET`] bytes in all (`fs/budget`).
//! - **Walks.** [`walk_yaml`] is iterative, follows a directory symlink at most once per
//!   directory (by device and inode) and reports a link back into its own ancestry
//!   (`fs/symlink-loop`); a folder it cannot list is an error (`fs/unreadable`), never skipped.

pub mod codes;
mod glob;

pub use glob::fnmatch;

use infx_report::Diagnostic;
use std::collections::HashSet;
use std::fmt;
use std::io::Read as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

/// The largest file read from a tree (16 MiB). The largest real file (the perf changelog) is
/// well under 1 MiB.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Bytes one process may read from trees in all (1 GiB): a tree of many files just under the
/// per-file limit fails instead of exhausting memory.
pub const TOTAL_READ_BUDGET: u64 = 1024 * 1024 * 1024;

static ROOTS: RwLock<Vec<PathBuf>> = RwLock::new(Vec::new());
static BYTES_READ: AtomicU64 = AtomicU64::new(0);
/// The open [`ReadLog`]s: each its root and the tree-relative paths read below it.
/// Hashed with foldhash: every resolution of a run inserts into it (docs/performance.md).
static READ_LOGS: Mutex<Vec<(u64, PathBuf, ReadPaths)>> = Mutex::new(Vec::new());
static LOGGING: AtomicBool = AtomicBool::new(false);
/// Paths resolved so far (as named → every symlink followed): folders, so that resolving a
/// file costs one `lstat` instead of a `readlink` per component, and files that are not links
/// (docs/security.md, "Resolving paths"). Emptied by [`confine_to`], i.e. once per command.
static CANON_DIRS: RwLock<Option<foldhash::HashMap<PathBuf, PathBuf>>> = RwLock::new(None);
static NEXT_LOG: AtomicU64 = AtomicU64::new(0);
/// Files looked at for a read about to happen ([`size_for_read`]): their metadata, taken by
/// that read, which then need not look again. Emptied by [`confine_to`].
static LOOKED: Mutex<Option<foldhash::HashMap<PathBuf, std::fs::Metadata>>> = Mutex::new(None);

/// The tree-relative paths a [`ReadLog`] holds.
pub type ReadPaths = foldhash::HashSet<PathBuf>;

/// Which files below a root this process reads from now on, until it is dropped: the
/// baseline exports only what the head's run read (docs/baseline.md, "Cost"). Logs of
/// different roots (tests running side by side) keep apart.
pub struct ReadLog {
    id: u64,
}

impl ReadLog {
    /// Starts logging the reads below `root` (an absolute path; links in it resolved).
    pub fn start(root: &Path) -> ReadLog {
        let id = NEXT_LOG.fetch_add(1, Ordering::Relaxed);
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut logs = READ_LOGS.lock().unwrap_or_else(|p| p.into_inner());
        logs.push((
            id,
            root,
            ReadPaths::with_capacity_and_hasher(1024, Default::default()),
        ));
        LOGGING.store(true, Ordering::Relaxed);
        ReadLog { id }
    }

    /// How many tree-relative paths were read so far (without copying them).
    pub fn len(&self) -> usize {
        let logs = READ_LOGS.lock().unwrap_or_else(|p| p.into_inner());
        logs.iter()
            .find(|(id, ..)| *id == self.id)
            .map_or(0, |(.., paths)| paths.len())
    }

    /// Whether nothing was read so far.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tree-relative paths read so far: each file and folder as named and as resolved.
    pub fn paths(&self) -> ReadPaths {
        let logs = READ_LOGS.lock().unwrap_or_else(|p| p.into_inner());
        logs.iter()
            .find(|(id, ..)| *id == self.id)
            .map(|(.., paths)| paths.clone())
            .unwrap_or_default()
    }
}

impl Drop for ReadLog {
    fn drop(&mut self) {
        let mut logs = READ_LOGS.lock().unwrap_or_else(|p| p.into_inner());
        logs.retain(|(id, ..)| *id != self.id);
        LOGGING.store(!logs.is_empty(), Ordering::Relaxed);
    }
}

/// Notes a read of `path` (resolved to `canon`) in the open logs whose root holds it.
fn log_read(path: &Path, canon: &Path) {
    if !LOGGING.load(Ordering::Relaxed) {
        return;
    }
    let mut logs = READ_LOGS.lock().unwrap_or_else(|p| p.into_inner());
    // Nearly every path is its own resolution: logged once, and copied only when new.
    let both = [path, canon];
    let named = if path.as_os_str() == canon.as_os_str() {
        &both[..1]
    } else {
        &both[..]
    };
    for (_, root, paths) in logs.iter_mut() {
        for p in named {
            if let Ok(rel) = p.strip_prefix(&*root)
                && !paths.contains(rel)
            {
                paths.insert(rel.to_path_buf());
            }
        }
    }
}

/// Why a tree path was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsErrorKind {
    OutsideRoot,
    NotRegular,
    TooLarge,
    Budget,
    Unreadable,
    SymlinkLoop,
    OutOfMemory,
}

impl FsErrorKind {
    /// The stable diagnostic code.
    pub fn code(self) -> infx_report::Code {
        match self {
            FsErrorKind::OutsideRoot => codes::OUTSIDE_ROOT,
            FsErrorKind::NotRegular => codes::NOT_REGULAR,
            FsErrorKind::TooLarge => codes::TOO_LARGE,
            FsErrorKind::Budget => codes::BUDGET,
            FsErrorKind::Unreadable => codes::UNREADABLE,
            FsErrorKind::SymlinkLoop => codes::SYMLINK_LOOP,
            FsErrorKind::OutOfMemory => codes::OUT_OF_MEMORY,
        }
    }
}

/// A refused or failed read. `path` is the path as the caller gave it (the link, for a symlink).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsError {
    pub kind: FsErrorKind,
    pub path: PathBuf,
    pub message: String,
    /// The underlying OS error kind, for [`FsErrorKind::Unreadable`].
    pub io_kind: Option<std::io::ErrorKind>,
}

impl FsError {
    fn new(kind: FsErrorKind, path: &Path, message: String) -> FsError {
        FsError {
            kind,
            path: path.to_path_buf(),
            message,
            io_kind: None,
        }
    }

    fn io(path: &Path, what: &str, e: &std::io::Error) -> FsError {
        FsError {
            io_kind: Some(e.kind()),
            ..FsError::new(
                FsErrorKind::Unreadable,
                path,
                format!("cannot {what} {}: {e}", shown(path)),
            )
        }
    }

    pub fn code(&self) -> infx_report::Code {
        self.kind.code()
    }

    /// True when the path does not exist at all (callers may treat that as "absent").
    pub fn is_not_found(&self) -> bool {
        self.io_kind == Some(std::io::ErrorKind::NotFound)
    }

    pub fn help(&self) -> &'static str {
        match self.kind {
            FsErrorKind::OutsideRoot => {
                "files read from the tree must stay inside the repository; replace the symlink with the file"
            }
            FsErrorKind::NotRegular => "only regular files and directories are read from the tree",
            FsErrorKind::TooLarge => "files in the tree are limited to 16 MiB (docs/security.md)",
            FsErrorKind::Budget => {
                "the tree holds more than 1 GiB of files to read (docs/security.md)"
            }
            FsErrorKind::Unreadable => "check the permissions of the file or folder",
            FsErrorKind::SymlinkLoop => "remove the symlink: it leads back into its own folder",
            FsErrorKind::OutOfMemory => {
                "the process is out of memory (an address-space limit, `ulimit -v`?); docs/security.md"
            }
        }
    }

    pub fn to_diagnostic(&self) -> Diagnostic {
        Diagnostic::error(self.code(), self.message.clone())
            .with_path(&self.path)
            .with_help(self.help())
    }
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.message, self.code())
    }
}

impl std::error::Error for FsError {}

impl From<FsError> for std::io::Error {
    fn from(e: FsError) -> std::io::Error {
        let kind = match e.kind {
            FsErrorKind::Unreadable => e.io_kind.unwrap_or(std::io::ErrorKind::Other),
            FsErrorKind::OutsideRoot => std::io::ErrorKind::PermissionDenied,
            _ => std::io::ErrorKind::InvalidData,
        };
        std::io::Error::new(kind, e)
    }
}

/// A path for messages: control characters escaped, so a file name cannot forge output lines.
fn shown(p: &Path) -> String {
    let s = p.display().to_string();
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if infx_report::is_unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Confines every later read and walk of this process to `root` (after resolving symlinks).
/// Called once per command with the repository root; several calls allow several roots. A
/// root that cannot be resolved is still registered (as given, made absolute), so that the
/// process never falls back to reading unconfined; the error says why.
pub fn confine_to(root: &Path) -> Result<(), FsError> {
    let (canon, result) = match root.canonicalize() {
        Ok(c) => (c, Ok(())),
        Err(e) => (
            std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf()),
            Err(FsError::io(root, "resolve", &e)),
        ),
    };
    let mut roots = ROOTS.write().unwrap_or_else(|p| p.into_inner());
    if !roots.contains(&canon) {
        roots.push(canon);
    }
    *CANON_DIRS.write().unwrap_or_else(|p| p.into_inner()) = None;
    *LOOKED.lock().unwrap_or_else(|p| p.into_inner()) = None;
    result
}

/// The size of the tree file `path` as a read of it would find it, for a caller sizing the
/// reads it is about to make; 0 when the file would be refused (the read then says why). The
/// look is kept for the read that follows ([`read`] takes it), so the file is looked at once.
pub fn size_for_read(path: &Path) -> u64 {
    match check_file(path) {
        Ok((_, meta)) => {
            let len = meta.len();
            LOOKED
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert_with(foldhash::HashMap::default)
                .insert(path.to_path_buf(), meta);
            len
        }
        Err(_) => 0,
    }
}

/// The metadata [`size_for_read`] kept for `path`, taken.
fn take_looked(path: &Path) -> Option<std::fs::Metadata> {
    LOOKED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_mut()
        .and_then(|looked| looked.remove(path))
}

/// `path` with every symlink followed, like [`Path::canonicalize`]. A path that is not itself
/// a link resolves to its folder's resolved form plus its name, and folders are resolved once
/// per command, each from its own folder's resolution: a tree's files share a few dozen
/// folders (docs/security.md, "Resolving paths"). Links, `.` and `..` take the full
/// resolution. Errors are `canonicalize`'s.
pub fn canonical(path: &Path) -> std::io::Result<PathBuf> {
    canonical_and_meta(path).map(|(canon, _)| canon)
}

/// `path`'s last component when it is a plain name below a non-empty parent: what the
/// folder-by-folder resolution handles (anything else takes the full resolution).
fn parent_and_name(path: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    let (parent, name) = (path.parent()?, path.file_name()?);
    let plain = matches!(
        path.components().next_back(),
        Some(std::path::Component::Normal(_))
    );
    (plain && !parent.as_os_str().is_empty()).then_some((parent, name))
}

/// [`canonical`], with `path`'s metadata when it is not a link (its `lstat`, which is then
/// also its `stat`: the caller need not ask again).
fn canonical_and_meta(path: &Path) -> std::io::Result<(PathBuf, Option<std::fs::Metadata>)> {
    // A path resolved already (a walk's folder, the tree root every recipe look-up names, a
    // recipe each of its readers resolves).
    if let Some(dir) = cached_dir(path) {
        return Ok((dir, None));
    }
    let Some((parent, name)) = parent_and_name(path) else {
        return path.canonicalize().map(|c| (c, None));
    };
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return path.canonicalize().map(|c| (c, None));
    }
    let canon = canonical_dir(parent)?.join(name);
    // Kept for the command, file or folder: a recipe is resolved by each of its readers.
    cache_dir(path, &canon);
    Ok((canon, Some(meta)))
}

fn cached_dir(dir: &Path) -> Option<PathBuf> {
    CANON_DIRS
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .and_then(|dirs| dirs.get(dir).cloned())
}

fn cache_dir(dir: &Path, canon: &Path) {
    CANON_DIRS
        .write()
        .unwrap_or_else(|p| p.into_inner())
        // Sized for a tree like August's (about 2,500 paths resolved): growing from empty
        // hashed every path again at each doubling (docs/performance.md).
        .get_or_insert_with(|| {
            foldhash::HashMap::with_capacity_and_hasher(4096, Default::default())
        })
        .insert(dir.to_path_buf(), canon.to_path_buf());
}

/// A folder resolved: from the cache, or from its closest cached ancestor down, one `lstat`
/// per folder not yet resolved (a link among them takes the full resolution). Iterative, so a
/// deep path costs no stack.
fn canonical_dir(dir: &Path) -> std::io::Result<PathBuf> {
    let mut below: Vec<&Path> = Vec::new();
    let mut at = dir;
    let mut resolved = loop {
        if let Some(c) = cached_dir(at) {
            break c;
        }
        match parent_and_name(at) {
            Some((parent, _)) => {
                below.push(at);
                at = parent;
            }
            None => {
                let c = at.canonicalize()?;
                cache_dir(at, &c);
                break c;
            }
        }
    };
    for d in below.into_iter().rev() {
        let meta = std::fs::symlink_metadata(d)?;
        resolved = match d.file_name() {
            Some(name) if !meta.file_type().is_symlink() => resolved.join(name),
            _ => d.canonicalize()?,
        };
        cache_dir(d, &resolved);
    }
    Ok(resolved)
}

/// True once [`confine_to`] was called in this process.
pub fn is_confining() -> bool {
    !ROOTS.read().unwrap_or_else(|p| p.into_inner()).is_empty()
}

/// Whether `path` exists and lies inside the roots (always true before [`confine_to`]): for
/// optional look-ups beside the tree (a parent folder's CODEOWNERS), which are skipped, not
/// reported, when they would leave the repository (docs/security.md).
pub fn is_inside(path: &Path) -> bool {
    canonical(path).is_ok_and(|c| is_confined(&c))
}

/// Inside a registered root, and not inside a `.git` folder there: CI checkouts keep the job's
/// token in `.git/config` (docs/security.md), so a link to it is as bad as one leaving the root.
fn is_confined(canon: &Path) -> bool {
    let roots = ROOTS.read().unwrap_or_else(|p| p.into_inner());
    roots.is_empty()
        || roots.iter().any(|r| {
            canon
                .strip_prefix(r)
                .is_ok_and(|rest| !rest.components().any(|c| c.as_os_str() == ".git"))
        })
}

/// The first symlink on `path`'s way down whose resolution leaves the roots: the link to name.
fn escaping_link(path: &Path) -> Option<PathBuf> {
    let mut prefix = PathBuf::new();
    for c in path.components() {
        prefix.push(c);
        let is_link = std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink());
        if is_link
            && prefix
                .canonicalize()
                .is_ok_and(|resolved| !is_confined(&resolved))
        {
            return Some(prefix);
        }
    }
    None
}

/// Resolves `path` and checks confinement; the canonical path on success.
pub fn resolve(path: &Path) -> Result<PathBuf, FsError> {
    resolve_and_meta(path).map(|(canon, _)| canon)
}

/// [`resolve`], with `path`'s metadata when it is not a link ([`canonical_and_meta`]).
fn resolve_and_meta(path: &Path) -> Result<(PathBuf, Option<std::fs::Metadata>), FsError> {
    let (canon, meta) = canonical_and_meta(path).map_err(|e| FsError::io(path, "resolve", &e))?;
    log_read(path, &canon);
    if !is_confined(&canon) {
        return Err(match escaping_link(path) {
            Some(link) => FsError::new(
                FsErrorKind::OutsideRoot,
                &link,
                format!(
                    "{} is a symlink that leads outside the repository; it is not read",
                    shown(&link)
                ),
            ),
            None => FsError::new(
                FsErrorKind::OutsideRoot,
                path,
                format!("{} is outside the repository; it is not read", shown(path)),
            ),
        });
    }
    Ok((canon, meta))
}

/// What a file that is not a regular file is, in words ("a directory", "a FIFO", …).
pub fn file_type_name(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// Checks `path` (confined, a regular file, within the size limit) without opening it.
pub fn check_file(path: &Path) -> Result<(PathBuf, std::fs::Metadata), FsError> {
    let (canon, meta) = resolve_and_meta(path)?;
    // A path that is not a link was just looked at (here, or for this read by
    // `size_for_read`): its metadata is the file's. `open` checks it is still the same file.
    let meta = match meta.or_else(|| take_looked(path)) {
        Some(meta) => within_limit(path, regular_meta(path, meta)?)?,
        None => regular_within_limit(path, &canon)?,
    };
    Ok((canon, meta))
}

/// The metadata of `target` (what `path` names) when it is a regular file within the size
/// limit; refused from the metadata alone, before anything is opened.
fn regular_within_limit(path: &Path, target: &Path) -> Result<std::fs::Metadata, FsError> {
    within_limit(path, regular(path, target)?)
}

fn within_limit(path: &Path, meta: std::fs::Metadata) -> Result<std::fs::Metadata, FsError> {
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large(path, meta.len()));
    }
    Ok(meta)
}

/// The metadata of `target` (what `path` names) when it is a regular file, refused from the
/// metadata alone otherwise.
fn regular(path: &Path, target: &Path) -> Result<std::fs::Metadata, FsError> {
    let meta = std::fs::metadata(target).map_err(|e| FsError::io(path, "read", &e))?;
    regular_meta(path, meta)
}

/// `meta` (of what `path` names) when it is a regular file's.
fn regular_meta(path: &Path, meta: std::fs::Metadata) -> Result<std::fs::Metadata, FsError> {
    if !meta.is_file() {
        return Err(FsError::new(
            FsErrorKind::NotRegular,
            path,
            format!(
                "{} is {}; only regular files are read",
                shown(path),
                file_type_name(&meta)
            ),
        ));
    }
    Ok(meta)
}

fn too_large(path: &Path, len: u64) -> FsError {
    FsError::new(
        FsErrorKind::TooLarge,
        path,
        format!(
            "{} has {len} bytes or more; the limit is {MAX_FILE_BYTES} bytes",
            shown(path)
        ),
    )
}

/// How many bytes this process has counted against [`TOTAL_READ_BUDGET`] so far: every byte
/// read, once per read (a test that a file is read once, not twice).
pub fn bytes_read() -> u64 {
    BYTES_READ.load(Ordering::Relaxed)
}

/// Reads a tree file: confined, regular, at most [`MAX_FILE_BYTES`], within the budget.
pub fn read(path: &Path) -> Result<Vec<u8>, FsError> {
    let (canon, meta) = check_file(path)?;
    read_checked(path, &canon, &meta)
}

/// Reads a file the invoker named that is not part of a tree (a `review pareto` artifact, the
/// three files git hands the merge driver): regular files only, size-limited and within the
/// budget, but not confined.
pub fn read_unconfined(path: &Path) -> Result<Vec<u8>, FsError> {
    let meta = regular_within_limit(path, path)?;
    read_checked(path, path, &meta)
}

/// The first `limit` bytes of a tree file, and its size: confined and regular like [`read`],
/// but with no per-file size limit, since at most `limit` bytes are read (change detection's
/// binary sniff of a file that may be large).
pub fn read_prefix(path: &Path, limit: u64) -> Result<(Vec<u8>, u64), FsError> {
    let (canon, meta) = resolve_and_meta(path)?;
    let meta = match meta {
        Some(meta) => regular_meta(path, meta)?,
        None => regular(path, &canon)?,
    };
    let file = open_counted(path, &canon, &meta, meta.len().min(limit))?;
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| FsError::io(path, "read", &e))?;
    Ok((bytes, meta.len()))
}

/// Opens the checked file `canon`, after counting `len` bytes against the budget.
fn open_counted(
    path: &Path,
    canon: &Path,
    meta: &std::fs::Metadata,
    len: u64,
) -> Result<std::fs::File, FsError> {
    let before = BYTES_READ.fetch_add(len, Ordering::Relaxed);
    if before.saturating_add(len) > TOTAL_READ_BUDGET {
        return Err(FsError::new(
            FsErrorKind::Budget,
            path,
            format!(
                "reading {} would pass the budget of {TOTAL_READ_BUDGET} bytes read in all",
                shown(path)
            ),
        ));
    }
    let file = std::fs::File::open(canon).map_err(|e| FsError::io(path, "read", &e))?;
    // The file was checked before `open`; check again that `open` got that very file (not a
    // FIFO swapped in meanwhile).
    let opened = file.metadata().map_err(|e| FsError::io(path, "read", &e))?;
    if !opened.is_file() || opened.ino() != meta.ino() || opened.dev() != meta.dev() {
        return Err(FsError::new(
            FsErrorKind::NotRegular,
            path,
            format!("{} changed while it was being read", shown(path)),
        ));
    }
    Ok(file)
}

std::thread_local! {
    static FALLIBLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True while this thread makes a reservation whose failure it reports itself: the program's
/// allocator leaves a refused allocation to the caller then, instead of ending the run
/// (xtask's `main.rs`; docs/security.md, "Memory").
pub fn reserving_fallibly() -> bool {
    FALLIBLE.with(std::cell::Cell::get)
}

/// `v.try_reserve_exact(n)`, marked as fallible for the allocator (see [`reserving_fallibly`]).
pub fn try_reserve(v: &mut Vec<u8>, n: usize) -> Result<(), std::collections::TryReserveError> {
    FALLIBLE.with(|f| f.set(true));
    let r = v.try_reserve_exact(n);
    FALLIBLE.with(|f| f.set(false));
    r
}

fn read_checked(path: &Path, canon: &Path, meta: &std::fs::Metadata) -> Result<Vec<u8>, FsError> {
    let file = open_counted(path, canon, meta, meta.len())?;
    // The file's size decides the buffer: reserved fallibly, so a refused allocation is a
    // finding naming the file, not an abort. One byte more holds the probe for growth.
    let len = usize::try_from(meta.len()).unwrap_or(usize::MAX);
    let mut bytes = Vec::new();
    try_reserve(&mut bytes, len.saturating_add(1)).map_err(|e| {
        FsError::new(
            FsErrorKind::OutOfMemory,
            path,
            format!(
                "{} has {len} bytes, and no buffer that large could be allocated ({e})",
                shown(path)
            ),
        )
    })?;
    // Never read past the limit if the file grows while read.
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FsError::io(path, "read", &e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(path, bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read`], then UTF-8 (an invalid file is [`std::io::ErrorKind::InvalidData`]).
pub fn read_to_string(path: &Path) -> std::io::Result<String> {
    utf8(path, read(path)?)
}

/// [`read_unconfined`], then UTF-8.
pub fn read_unconfined_to_string(path: &Path) -> std::io::Result<String> {
    utf8(path, read_unconfined(path)?)
}

fn utf8(path: &Path, bytes: Vec<u8>) -> std::io::Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} is not valid UTF-8: {e}", shown(path)),
        )
    })
}

/// The entries of one tree directory, sorted, hidden entries (`.git`, editor files) left out.
/// The directory itself must be confined and readable.
pub fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, FsError> {
    Ok(list_dir_typed(dir)?.into_iter().map(|(p, _)| p).collect())
}

/// [`list_dir`], each entry with its type as the folder listing gives it (no `stat` on the
/// file systems that say; `std` looks at the entry itself on those that do not).
fn list_dir_typed(dir: &Path) -> Result<Vec<(PathBuf, std::fs::FileType)>, FsError> {
    resolve(dir)?;
    let rd = std::fs::read_dir(dir).map_err(|e| FsError::io(dir, "list the folder", &e))?;
    let mut entries = Vec::new();
    for e in rd {
        let e = e.map_err(|e| FsError::io(dir, "list the folder", &e))?;
        if !e.file_name().to_string_lossy().starts_with('.') {
            let kind = e
                .file_type()
                .map_err(|err| FsError::io(&e.path(), "read", &err))?;
            entries.push((e.path(), kind));
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

/// The result of a walk: files in sorted depth-first order, and every problem met on the way.
#[derive(Debug, Default)]
pub struct Walk {
    pub files: Vec<PathBuf>,
    pub problems: Vec<FsError>,
}

fn is_yaml(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
}

/// Every `*.yaml` / `*.yml` file below `dir`, depth first in sorted order, hidden entries
/// skipped. An absent `dir` has none. Problems (an unreadable folder, a symlink out of the
/// root or into its own ancestry, a FIFO named `*.yaml`) are collected, never skipped silently.
pub fn walk_yaml(dir: &Path) -> Walk {
    let mut walk = Walk::default();
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return walk,
        Err(e) => {
            walk.problems
                .push(FsError::io(&blocking_folder(dir), "list the folder", &e));
            return walk;
        }
        Ok(_) => {}
    }
    let top = match resolve(dir) {
        Ok(c) => c,
        Err(e) => {
            walk.problems.push(e);
            return walk;
        }
    };
    let Ok(top_meta) = std::fs::metadata(&top) else {
        return walk;
    };
    if !top_meta.is_dir() {
        return walk;
    }
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    seen.insert((top_meta.dev(), top_meta.ino()));
    // An explicit stack (reversed sorted entries) keeps the order of a recursive walk without
    // recursion proportional to the tree's depth.
    let mut stack: Vec<(PathBuf, std::fs::FileType)> = Vec::new();
    push_entries(dir, &mut stack, &mut walk);
    while let Some((p, kind)) = stack.pop() {
        // A regular file as listed needs no look of its own: a YAML one is read through
        // `read`, which checks it again (docs/security.md, "Resolving paths").
        if kind.is_file() {
            if is_yaml(&p) {
                walk.files.push(p);
            }
            continue;
        }
        let Ok(lmeta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let is_link = lmeta.file_type().is_symlink();
        if lmeta.is_dir() || is_link {
            let canon = match resolve(&p) {
                Ok(c) => c,
                Err(e) if is_link && e.is_not_found() && !is_yaml(&p) => continue,
                Err(e) => {
                    walk.problems.push(e);
                    continue;
                }
            };
            let meta = match std::fs::metadata(&canon) {
                Ok(m) => m,
                Err(e) => {
                    walk.problems.push(FsError::io(&p, "read", &e));
                    continue;
                }
            };
            if meta.is_dir() {
                // A link to one of its own ancestors would walk the tree again and again.
                let parent = p.parent().and_then(|q| canonical(q).ok());
                if is_link && parent.is_some_and(|q| q.starts_with(&canon)) {
                    walk.problems.push(FsError::new(
                        FsErrorKind::SymlinkLoop,
                        &p,
                        format!(
                            "{} is a symlink to one of its own parent folders",
                            shown(&p)
                        ),
                    ));
                    continue;
                }
                // A second way to a folder walked already: walk it once.
                if !seen.insert((meta.dev(), meta.ino())) {
                    continue;
                }
                push_entries(&p, &mut stack, &mut walk);
                continue;
            }
            if is_yaml(&p) {
                file_found(&p, &meta, &mut walk);
            }
        } else if is_yaml(&p) {
            file_found(&p, &lmeta, &mut walk);
        }
    }
    walk
}

/// The folder that keeps `dir` from being reached: its closest ancestor that can be looked at
/// (but, evidently, not into). Names `benchmarks/` rather than a path below it.
fn blocking_folder(dir: &Path) -> PathBuf {
    dir.ancestors()
        .skip(1)
        .find(|a| !a.as_os_str().is_empty() && std::fs::symlink_metadata(a).is_ok())
        .unwrap_or(dir)
        .to_path_buf()
}

fn file_found(p: &Path, meta: &std::fs::Metadata, walk: &mut Walk) {
    if meta.is_file() {
        walk.files.push(p.to_path_buf());
    } else {
        walk.problems.push(FsError::new(
            FsErrorKind::NotRegular,
            p,
            format!(
                "{} is {}; only regular files are read",
                shown(p),
                file_type_name(meta)
            ),
        ));
    }
}

fn push_entries(dir: &Path, stack: &mut Vec<(PathBuf, std::fs::FileType)>, walk: &mut Walk) {
    match list_dir_typed(dir) {
        Ok(entries) => stack.extend(entries.into_iter().rev()),
        Err(e) => walk.problems.push(e),
    }
}

/// [`walk_yaml`] for callers that stop at the first problem.
pub fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, FsError> {
    let walk = walk_yaml(dir);
    match walk.problems.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(walk.files),
    }
}

#[cfg(test)]
mod tests;
