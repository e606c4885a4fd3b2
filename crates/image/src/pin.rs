//! `pin`: find image references in a tree, resolve their tags to multi-arch index digests, and
//! rewrite only the reference text. Planning is pure; writing is all-or-nothing and atomic per
//! file.

use crate::client::Client;
use crate::codes;
use crate::manifest::Platform;
use crate::reference::{Digest, Reference};
use crate::sites::{self, ImageSite};
use crate::verify::{self, ResolveError};
use infx_report::{Diagnostic, Span};
use infx_yaml::{Document, Edit};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The files holding image references under a benchmark tree, in a fixed order: the master
/// configs directly in `configs/` (live or not: `infx_config::layout::Role::Master` and
/// `OtherMaster`), the lane blocks, then the srt-slurm recipes under `benchmarks/`.
pub fn discover(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    use infx_config::layout::{self, Role};
    let role = |p: &Path| layout::role(p.strip_prefix(root).unwrap_or(p));
    let mut out = Vec::new();
    let configs = root.join(layout::CONFIGS_DIR);
    if configs.is_dir() {
        // infx-fs lists the folder (confined, sorted; docs/security.md) and `load` refuses
        // what is not a regular file.
        let masters: Vec<PathBuf> = infx_fs::list_dir(&configs)?
            .into_iter()
            .filter(|p| !p.is_dir() && matches!(role(p), Role::Master | Role::OtherMaster))
            .collect();
        out.extend(masters);
        yaml_files(&root.join(layout::LANES_DIR), &mut out)?;
    }
    let mut bench = Vec::new();
    yaml_files(&root.join(layout::BENCHMARKS_DIR), &mut bench)?;
    out.extend(bench.into_iter().filter(|p| role(p) == Role::Recipe));
    Ok(out)
}

/// Appends every YAML file below `dir` ([`infx_yaml::yaml_files`]); nothing when `dir` is absent.
pub fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    out.extend(infx_yaml::yaml_files(dir)?);
    Ok(())
}

/// Loaded files and their sites.
#[derive(Debug, Default)]
pub struct Loaded {
    pub docs: Vec<Document>,
    pub sites: Vec<ImageSite>,
    /// YAML errors and non-string image fields.
    pub diagnostics: Vec<Diagnostic>,
}

pub fn load(paths: &[PathBuf]) -> Loaded {
    let mut l = Loaded::default();
    for p in paths {
        match infx_yaml::load_file(p) {
            Ok(doc) => {
                let (s, d) = sites::sites_in(&doc);
                l.sites.extend(s);
                l.diagnostics.extend(d);
                l.docs.push(doc);
            }
            Err(d) => l.diagnostics.push(d),
        }
    }
    l
}

/// The result of resolving one distinct `registry/repository:tag`.
pub type Resolution = Result<verify::Resolved, ResolveError>;

/// Resolves every distinct tag of the sites (digest-only references are not resolved), `jobs`
/// at a time. Keys are [`Reference::tagged`].
pub fn resolve_sites(
    client: &Client,
    sites: &[ImageSite],
    required: &[Platform],
    jobs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> BTreeMap<String, Resolution> {
    verify::per_distinct_reference(
        sites,
        |r| {
            r.effective_tag()
                .is_some()
                .then(|| (r.tagged(), Reference { digest: None, ..r }))
        },
        jobs,
        progress,
        |r| verify::resolve(client, r, required),
    )
}

/// One rewritten reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    pub span: Span,
    pub before: String,
    pub after: String,
}

/// New contents of one file.
#[derive(Clone, Debug)]
pub struct FileUpdate {
    pub path: PathBuf,
    pub original: String,
    pub updated: String,
}

#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub changes: Vec<Change>,
    pub files: Vec<FileUpdate>,
    /// Errors make the whole run fail (nothing is written); warnings do not.
    pub diagnostics: Vec<Diagnostic>,
}

impl Plan {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == infx_report::Severity::Error)
    }
}

/// The text a site should read after pinning: as written (enroot `#` and all) up to the digest,
/// the implicit `latest` made explicit, then `@<digest>`.
pub fn pinned_text(written: &str, r: &Reference, digest: &Digest) -> String {
    let base = written.split('@').next().unwrap_or(written);
    if r.tag.is_none() {
        format!("{base}:latest@{digest}")
    } else {
        format!("{base}@{digest}")
    }
}

/// Plans the edits (pure). Any site that cannot be pinned adds an error; digest-only references
/// are left as they are with a warning.
pub fn plan(
    docs: &[Document],
    sites: &[ImageSite],
    resolved: &BTreeMap<String, Resolution>,
) -> Plan {
    let mut plan = Plan::default();
    let mut edits: BTreeMap<&Path, Vec<Edit>> = BTreeMap::new();
    for s in sites {
        let at = |d: Diagnostic| d.at(&s.path, s.span);
        let what = s.describe();
        let r = match Reference::parse(&s.written) {
            Ok(r) => r,
            Err(e) => {
                plan.diagnostics.push(at(Diagnostic::error(
                    codes::MALFORMED,
                    format!("{what}: {e}"),
                )));
                continue;
            }
        };
        if r.effective_tag().is_none() {
            plan.diagnostics.push(at(Diagnostic::warning(
                codes::MISSING_TAG,
                format!("{what} `{}` has a digest but no tag; left unchanged", s.written),
            )
            .with_help("write the tag the digest belongs to (`repo:<tag>@sha256:…`) so it can be re-pinned and checked")));
            continue;
        }
        let resolution = match resolved.get(&r.tagged()) {
            Some(x) => x,
            None => {
                plan.diagnostics.push(at(Diagnostic::error(
                    codes::REGISTRY,
                    format!("{what}: `{}` was not resolved", r.tagged()),
                )));
                continue;
            }
        };
        let digest = match resolution {
            Ok(res) => &res.digest,
            Err(e) => {
                let code = match e {
                    ResolveError::TagNotFound { .. } => codes::TAG_NOT_FOUND,
                    ResolveError::NotMultiArch { .. } => codes::NOT_MULTI_ARCH,
                    ResolveError::MissingPlatforms { .. } => codes::MISSING_PLATFORM,
                    ResolveError::NoTag => codes::MISSING_TAG,
                    ResolveError::Registry(crate::client::RegistryError::DigestMismatch {
                        ..
                    }) => codes::DIGEST_MISMATCH,
                    ResolveError::Registry(_) => codes::REGISTRY,
                };
                let help = match e {
                    ResolveError::TagNotFound { .. } => {
                        "check the tag on the registry; never invent a release tag from a dated nightly"
                    }
                    ResolveError::NotMultiArch { .. } | ResolveError::MissingPlatforms { .. } => {
                        "use a tag published as a multi-arch index covering the required platforms (or change --platform)"
                    }
                    ResolveError::Registry(crate::client::RegistryError::Hermetic { .. }) => {
                        "pinning needs the registry: run without --hermetic, outside a Nix build"
                    }
                    _ => "retry later, or check the registry, credentials and --registry-override",
                };
                plan.diagnostics.push(at(Diagnostic::error(
                    code,
                    format!("{what}: cannot pin `{}`: {e}", r.tagged()),
                )
                .with_help(help)));
                continue;
            }
        };
        if r.digest.as_ref() == Some(digest) {
            continue;
        }
        let Some(range) = s.range.clone() else {
            plan.diagnostics.push(at(Diagnostic::error(
                codes::UNSUPPORTED_SCALAR,
                format!("{what} is written in a YAML style that cannot be edited byte-exactly"),
            )
            .with_help("write the reference as a plain or simply quoted scalar")));
            continue;
        };
        let after = pinned_text(&s.written, &r, digest);
        plan.changes.push(Change {
            path: s.path.clone(),
            span: s.span,
            before: s.written.clone(),
            after: after.clone(),
        });
        edits.entry(s.path.as_path()).or_default().push(Edit {
            range,
            replacement: after,
        });
    }
    for doc in docs {
        let Some(e) = edits.get(doc.path.as_path()) else {
            continue;
        };
        match infx_yaml::apply_edits(&doc.text, e) {
            Some(updated) => plan.files.push(FileUpdate {
                path: doc.path.clone(),
                original: doc.text.to_string(),
                updated,
            }),
            None => plan.diagnostics.push(
                Diagnostic::error(codes::EDIT, "overlapping or invalid edits; nothing written")
                    .at(&doc.path, Span::line(1)),
            ),
        }
    }
    plan
}

/// The lock `pin` runs of one checkout take (docs/security.md, "Pinning"): `infx-pin.lock`
/// beside the journal. A writing run holds it exclusively from before it completes an
/// interrupted journal until its own journal is gone; a reading run (`--check`, `--dry-run`)
/// holds it shared. Released when dropped, or by the kernel when the process dies (so a
/// SIGKILLed run never leaves it held). The file itself stays: removing a lock file races.
#[derive(Debug)]
pub struct PinLock {
    _file: std::fs::File,
}

impl PinLock {
    /// Where the lock of `journal` lives (hidden like the journal outside a repository).
    pub fn path(journal: &Path) -> PathBuf {
        let hidden = journal
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        journal.with_file_name(if hidden {
            ".infx-pin.lock"
        } else {
            "infx-pin.lock"
        })
    }

    /// Takes the lock of `journal`'s checkout; when another run holds it, calls `waiting`
    /// once, then blocks until it is free.
    pub fn acquire(
        journal: &Path,
        exclusive: bool,
        waiting: &dyn Fn(&Path),
    ) -> std::io::Result<PinLock> {
        let path = PinLock::path(journal);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        let tried = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match tried {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                waiting(&path);
                if exclusive {
                    file.lock()?;
                } else {
                    file.lock_shared()?;
                }
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        Ok(PinLock { _file: file })
    }
}

/// Removes `.<name>.infx-pin.<pid>.tmp` siblings of `target` left by a pin that was killed
/// before its journal, so an interrupted run leaves no litter after the next one, whether or
/// not that one has anything to write. Called under the exclusive [`PinLock`]: no other pin
/// of this checkout is writing, so every temporary but this process's own is stale (a live
/// pid check alone kept the litter of a killed run whose pid was reused).
pub fn remove_stale_temps(target: &Path) {
    let (Some(dir), Some(name)) = (target.parent(), target.file_name().and_then(|n| n.to_str()))
    else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!(".{name}.infx-pin.");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(pid) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|rest| rest.strip_suffix(".tmp"))
        else {
            continue;
        };
        let ours = pid.parse::<u32>().is_ok_and(|p| p == std::process::id());
        if !ours && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Writes every update or none, as a set, even when the process is killed part way
/// (docs/security.md, "Pinning"):
/// 1. a journal left by an interrupted run is completed first ([`recover`]);
/// 2. each file goes to a temporary sibling (synced); every original is re-read to make sure
///    nobody changed it meanwhile; on any error the temporaries are removed, nothing written;
/// 3. the journal is written (synced): from here the run is committed;
/// 4. the temporaries are renamed over the originals (`after_rename(n)` is called after the
///    n-th, for tests that kill the run between renames), then the journal is removed.
///
/// A run killed before step 3 leaves only temporaries, which the next run removes; one killed
/// after it is rolled forward by the next run.
pub fn write_all(
    files: &[FileUpdate],
    journal: &Path,
    after_rename: &dyn Fn(usize),
) -> std::io::Result<()> {
    recover(journal)?;
    for f in files {
        remove_stale_temps(&f.path);
    }
    let mut temps: Vec<(PathBuf, &FileUpdate)> = Vec::new();
    let result = (|| {
        for f in files {
            let name = f
                .path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("file");
            let tmp = f
                .path
                .with_file_name(format!(".{name}.infx-pin.{}.tmp", std::process::id()));
            temps.push((tmp.clone(), f));
            let mut fh = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            fh.write_all(f.updated.as_bytes())?;
            if let Ok(meta) = std::fs::metadata(&f.path) {
                fh.set_permissions(meta.permissions())?;
            }
            fh.sync_all()?;
        }
        for f in files {
            if infx_fs::read_to_string(&f.path)? != f.original {
                return Err(std::io::Error::other(format!(
                    "{} changed while pinning; nothing written",
                    f.path.display()
                )));
            }
        }
        if files.len() > 1 {
            write_journal(journal, &temps)?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        for (tmp, _) in &temps {
            let _ = std::fs::remove_file(tmp);
        }
        return Err(e);
    }
    for (n, (tmp, f)) in temps.iter().enumerate() {
        std::fs::rename(tmp, &f.path)?;
        after_rename(n + 1);
    }
    if files.len() > 1 {
        std::fs::remove_file(journal)?;
        sync_parent(journal);
    }
    Ok(())
}

/// One file of a journaled write: where it goes, its temporary, and the digests of its text
/// before and after.
struct JournalEntry {
    path: PathBuf,
    temp: PathBuf,
    original: String,
    updated: String,
}

fn text_digest(bytes: &[u8]) -> String {
    Digest::sha256_of(bytes).to_string()
}

/// An absolute form of `p` (the next run may start elsewhere).
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn write_journal(journal: &Path, temps: &[(PathBuf, &FileUpdate)]) -> std::io::Result<()> {
    let entries: Vec<JournalEntry> = temps
        .iter()
        .map(|(tmp, f)| JournalEntry {
            path: absolute(&f.path),
            temp: absolute(tmp),
            original: text_digest(f.original.as_bytes()),
            updated: text_digest(f.updated.as_bytes()),
        })
        .collect();
    let json: Vec<serde_json::Value> = entries
        .iter()
        .map(|e| {
            serde_json::json!({
                "path": e.path.to_string_lossy(),
                "temp": e.temp.to_string_lossy(),
                "original": e.original,
                "updated": e.updated,
            })
        })
        .collect();
    let text = serde_json::to_string(&json).map_err(std::io::Error::other)?;
    let mut fh = std::fs::File::create(journal)?;
    fh.write_all(text.as_bytes())?;
    fh.sync_all()?;
    sync_parent(journal);
    Ok(())
}

/// Makes a rename or removal in `p`'s folder durable (best effort: not every platform can
/// sync a directory).
fn sync_parent(p: &Path) {
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty())
        && let Ok(d) = std::fs::File::open(dir)
    {
        let _ = d.sync_all();
    }
}

fn parse_journal(text: &str) -> Option<Vec<JournalEntry>> {
    let json: Vec<serde_json::Value> = serde_json::from_str(text).ok()?;
    json.iter()
        .map(|v| {
            let field = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
            Some(JournalEntry {
                path: PathBuf::from(field("path")?),
                temp: PathBuf::from(field("temp")?),
                original: field("original")?,
                updated: field("updated")?,
            })
        })
        .collect()
}

/// What [`recover`] did with the journal of an interrupted run.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Files the interrupted run had committed to and that now hold their pinned text.
    pub completed: Vec<PathBuf>,
    /// Files edited since the interrupted run (neither its original nor its pinned text):
    /// left as they are, their temporary removed.
    pub left: Vec<PathBuf>,
}

/// Completes the journaled write an interrupted run left at `journal`, if any (`Ok(None)`
/// when there is none): every file still holding its original text gets its temporary; a
/// file that changed since is left alone. The journal is removed afterwards.
pub fn recover(journal: &Path) -> std::io::Result<Option<Recovery>> {
    let text = match std::fs::read_to_string(journal) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let entries = parse_journal(&text).ok_or_else(|| {
        std::io::Error::other(format!(
            "{} is not a pin journal; remove it after checking the files it names",
            journal.display()
        ))
    })?;
    let mut done = Recovery::default();
    for e in &entries {
        let now = infx_fs::read(&e.path).ok().map(|b| text_digest(&b));
        let temp_there = std::fs::symlink_metadata(&e.temp).is_ok_and(|m| m.is_file());
        if temp_there && now.as_deref() == Some(e.original.as_str()) {
            std::fs::rename(&e.temp, &e.path)?;
            done.completed.push(e.path.clone());
            continue;
        }
        if temp_there {
            std::fs::remove_file(&e.temp)?;
        }
        if now.as_deref() == Some(e.updated.as_str()) {
            done.completed.push(e.path.clone());
        } else {
            done.left.push(e.path.clone());
        }
    }
    std::fs::remove_file(journal)?;
    sync_parent(journal);
    Ok(Some(done))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::doc;
    use crate::verify::Resolved;

    fn d(c: char) -> Digest {
        Digest::parse(&format!("sha256:{}", c.to_string().repeat(64))).unwrap()
    }

    fn ok(c: char) -> Resolution {
        Ok(Resolved {
            digest: d(c),
            media_type: crate::manifest::OCI_INDEX.into(),
            platforms: Platform::defaults(),
        })
    }

    #[test]
    fn plan_rewrites_only_reference_text() {
        let text = "a:\n  image: lmsysorg/sglang:v1   # keep me\nb:\n  image: \"nvcr.io#nvidia/x:1\"\nc:\n  image: ubuntu\n";
        let docs = vec![doc("configs/nvidia-master.yaml", text)];
        let (sites, _) = sites::master_sites(&docs[0]);
        let resolved: BTreeMap<String, Resolution> = [
            ("docker.io/lmsysorg/sglang:v1".to_string(), ok('a')),
            ("nvcr.io/nvidia/x:1".to_string(), ok('b')),
            ("docker.io/library/ubuntu:latest".to_string(), ok('c')),
        ]
        .into();
        let p = plan(&docs, &sites, &resolved);
        assert!(!p.has_errors(), "{:?}", p.diagnostics);
        let want = format!(
            "a:\n  image: lmsysorg/sglang:v1@{}   # keep me\nb:\n  image: \"nvcr.io#nvidia/x:1@{}\"\nc:\n  image: ubuntu:latest@{}\n",
            d('a'),
            d('b'),
            d('c')
        );
        assert_eq!(p.files[0].updated, want);
        // Second run: the same resolution changes nothing.
        let docs2 = vec![doc("configs/nvidia-master.yaml", &want)];
        let (sites2, _) = sites::master_sites(&docs2[0]);
        let p2 = plan(&docs2, &sites2, &resolved);
        assert!(p2.files.is_empty() && p2.changes.is_empty());
    }

    #[test]
    fn one_failure_fails_the_plan_and_digest_only_is_a_warning() {
        let text = format!("a:\n  image: x/y:v1\nb:\n  image: x/z@{}\n", d('e'));
        let docs = vec![doc("configs/amd-master.yaml", &text)];
        let (sites, _) = sites::master_sites(&docs[0]);
        let resolved: BTreeMap<String, Resolution> = [(
            "docker.io/x/y:v1".to_string(),
            Err(ResolveError::TagNotFound { tag: "v1".into() }),
        )]
        .into();
        let p = plan(&docs, &sites, &resolved);
        assert!(p.has_errors());
        let codes: Vec<_> = p.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, [codes::TAG_NOT_FOUND, codes::MISSING_TAG]);
    }

    fn strip_digests(s: &str) -> String {
        let mut out = s.to_string();
        while let Some(i) = out.find("@sha256:") {
            out.replace_range(i..i + 8 + 64, "");
        }
        out
    }

    proptest::proptest! {
        /// Whatever the quoting, comments and existing pins, pinning changes nothing but the
        /// digests, every reference ends up with its tag's digest, and a second plan is empty.
        #[test]
        fn only_digests_change_and_pinning_is_idempotent(
            entries in proptest::collection::vec(
                ("[a-z]{1,6}/[a-z]{1,6}", "[a-z0-9][a-z0-9.-]{0,10}", 0u8..3, proptest::option::of("[ -~]{0,20}"), proptest::bool::ANY, 0u8..16),
                1..8,
            )
        ) {
            let hex = "0123456789abcdef";
            let mut text = String::from("# generated\n");
            let mut resolved: BTreeMap<String, Resolution> = BTreeMap::new();
            for (i, (repo, tag, quote, comment, pinned, n)) in entries.iter().enumerate() {
                let old = if *pinned { format!("@sha256:{}", "f".repeat(64)) } else { String::new() };
                let reference = format!("{repo}:{tag}{old}");
                let scalar = match quote {
                    0 => reference.clone(),
                    1 => format!("'{reference}'"),
                    _ => format!("\"{reference}\""),
                };
                let comment = comment.as_deref().map(|c| format!("  # {}", c.replace('#', ""))).unwrap_or_default();
                text.push_str(&format!("entry{i}:\n  image: {scalar}{comment}\n  model: m{i}\n"));
                let c = hex.as_bytes()[*n as usize] as char;
                resolved.entry(format!("docker.io/{repo}:{tag}")).or_insert_with(|| ok(c));
            }
            let docs = vec![doc("configs/x-master.yaml", &text)];
            let (sites, diags) = sites::master_sites(&docs[0]);
            proptest::prop_assert!(diags.is_empty());
            let p = plan(&docs, &sites, &resolved);
            proptest::prop_assert!(!p.has_errors(), "{:?}", p.diagnostics);
            let updated = p.files.first().map(|f| f.updated.clone()).unwrap_or_else(|| text.clone());
            proptest::prop_assert_eq!(strip_digests(&updated), strip_digests(&text));
            let docs2 = vec![doc("configs/x-master.yaml", &updated)];
            let (sites2, _) = sites::master_sites(&docs2[0]);
            for s in &sites2 {
                let r = Reference::parse(&s.written).unwrap();
                let want = resolved[&r.tagged()].as_ref().unwrap().digest.clone();
                proptest::prop_assert_eq!(r.digest, Some(want));
            }
            let again = plan(&docs2, &sites2, &resolved);
            proptest::prop_assert!(again.changes.is_empty());
        }
    }

    fn update(path: &Path, original: &str, updated: &str) -> FileUpdate {
        FileUpdate {
            path: path.to_path_buf(),
            original: original.into(),
            updated: updated.into(),
        }
    }

    /// A temporary directory holding `a.yaml` (`a: 1`) and `b.yaml` (`b: 1`), and where the
    /// journal goes. Returns (dir, a, b, journal).
    fn two_files() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.yaml"), dir.path().join("b.yaml"));
        let journal = dir.path().join("journal");
        std::fs::write(&a, "a: 1\n").unwrap();
        std::fs::write(&b, "b: 1\n").unwrap();
        (dir, a, b, journal)
    }

    #[test]
    fn write_all_is_atomic_and_checks_for_concurrent_edits() {
        let (dir, a, b, journal) = two_files();
        let stale = [
            update(&a, "a: 1\n", "a: 2\n"),
            update(&b, "b: 0\n", "b: 2\n"),
        ];
        assert!(write_all(&stale, &journal, &|_| {}).is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a: 1\n");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "temporaries removed"
        );
        let good = [
            update(&a, "a: 1\n", "a: 2\n"),
            update(&b, "b: 1\n", "b: 2\n"),
        ];
        write_all(&good, &journal, &|_| {}).unwrap();
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "b: 2\n");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no journal or temporary left"
        );
    }

    /// Two files, the write stopped after its first rename (a panic stands in for the kill:
    /// nothing after the rename runs). Returns (dir, a, b, journal).
    fn interrupted() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
        let (dir, a, b, journal) = two_files();
        let files = [
            update(&a, "a: 1\n", "a: 2\n"),
            update(&b, "b: 1\n", "b: 2\n"),
        ];
        let stopped = std::panic::catch_unwind(|| {
            let _ = write_all(&files, &journal, &|n| {
                if n == 1 {
                    panic!("killed after the first rename");
                }
            });
        });
        assert!(stopped.is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a: 2\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "b: 1\n");
        assert!(journal.is_file());
        (dir, a, b, journal)
    }

    #[test]
    fn an_interrupted_set_is_completed_by_the_next_write() {
        let (dir, a, b, journal) = interrupted();
        let r = recover(&journal).unwrap().expect("a journal");
        assert_eq!(r.completed.len(), 2, "{r:?}");
        assert!(r.left.is_empty());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a: 2\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "b: 2\n");
        assert!(!journal.exists());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no litter"
        );
        assert_eq!(recover(&journal).unwrap(), None);
    }

    #[test]
    fn a_file_edited_after_the_interruption_is_left_alone() {
        let (dir, _a, b, journal) = interrupted();
        std::fs::write(&b, "b: mine\n").unwrap();
        let r = recover(&journal).unwrap().expect("a journal");
        assert_eq!(r.left, vec![std::path::absolute(&b).unwrap()]);
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "b: mine\n");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no litter"
        );
        // A journal that is not one is refused, not guessed at.
        std::fs::write(&journal, "not json").unwrap();
        assert!(recover(&journal).is_err());
    }

    #[test]
    fn stale_temporaries_of_a_killed_pin_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.yaml");
        std::fs::write(&path, "image: a\n").unwrap();
        // pid_max on Linux is at most 2^22: this process cannot exist.
        let stale = dir.path().join(".m.yaml.infx-pin.4294967295.tmp");
        let other = dir.path().join(".other.yaml.infx-pin.4294967295.tmp");
        let live = dir
            .path()
            .join(format!(".m.yaml.infx-pin.{}.tmp.keep", std::process::id()));
        for p in [&stale, &other, &live] {
            std::fs::write(p, "half").unwrap();
        }
        write_all(
            &[update(&path, "image: a\n", "image: b\n")],
            &dir.path().join("journal"),
            &|_| {},
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "image: b\n");
        assert!(!stale.exists(), "stale temporary left behind");
        assert!(
            other.exists(),
            "another file's temporary is not ours to remove"
        );
        assert!(live.exists());
    }
}
