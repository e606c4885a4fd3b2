//! Replaying a repository's changelog history: for every first-parent commit that touched the
//! changelog, the strict, gate and key-resolution verdicts of the change against its parent.
//! The history is read by the caller through [`History`] (xtask's `history` module implements
//! it over git); each file version is read and parsed once.

use crate::codes;
use crate::entry::Dialect;
use crate::gate::{GateError, Modifiers, gate};
use crate::keys::{KeyError, MasterKeys, resolve_keys};
use crate::strict::{
    Comparison, LinkMode, Parsed, StrictError, StrictStage, check_parsed, parse_changelog,
};
use crate::{CHANGELOG_PATH, MASTER_CONFIGS};
use infx_config::layout;
use infx_git::{CommitInfo, Oid};
use std::collections::HashMap;

/// The history a replay walks, read by the caller (object ids are git's).
pub trait History {
    type Error: Send;
    /// What another replay thread reads through.
    type Fork: History<Error = Self::Error> + Send;
    /// The first-parent history of `head` (oldest first) restricted to the commits whose
    /// version of `path` differs from their first parent's.
    fn commits_touching(&self, head: Oid, path: &str) -> Result<Vec<CommitInfo>, Self::Error>;
    /// The blob id at `path` in `commit`, `None` when there is no file there.
    fn blob_id_at(&self, commit: Oid, path: &str) -> Result<Option<Oid>, Self::Error>;
    /// The bytes of the blob `id`.
    fn blob(&self, id: Oid) -> Result<Vec<u8>, Self::Error>;
    /// Another handle on the same history, for another replay thread.
    fn fork(&self) -> Result<Self::Fork, Self::Error>;
    /// The error a replay reports when one of its threads panicked.
    fn thread_panicked() -> Self::Error;
}

/// Our verdicts for one commit.
#[derive(Debug, Clone)]
pub struct CommitVerdict {
    pub commit: Oid,
    pub parent: Option<Oid>,
    pub summary: String,
    pub strict: Result<Comparison, (StrictStage, StrictError)>,
    pub gate: Result<usize, GateError>,
    /// `None` when the gate's changelog part failed (keys are not reached).
    pub keys: Option<Result<(), KeyError>>,
}

/// `rel` inside the benchmark tree at `tree` (repository-relative; empty = the repository).
fn in_tree(tree: &str, rel: &str) -> String {
    if tree.is_empty() {
        rel.to_string()
    } else {
        format!("{}/{rel}", tree.trim_end_matches('/'))
    }
}

/// Where a revision's masters live: `configs/` or, before upstream #1992, `.github/configs/`
/// (of the tree at `tree`).
fn master_ids<H: History>(
    repo: &H,
    commit: Oid,
    tree: &str,
) -> Result<Vec<(String, Option<Oid>)>, H::Error> {
    let root = if repo
        .blob_id_at(commit, &in_tree(tree, MASTER_CONFIGS[0]))?
        .is_some()
        || repo
            .blob_id_at(commit, &in_tree(tree, MASTER_CONFIGS[1]))?
            .is_some()
    {
        in_tree(tree, layout::CONFIGS_DIR)
    } else {
        in_tree(tree, layout::LEGACY_CONFIGS_DIR)
    };
    MASTER_CONFIGS
        .iter()
        .map(|m| {
            let p = layout::configs_path_in(m, &root);
            // Upstream names the files by their `configs/` path (it copies them there).
            repo.blob_id_at(commit, &p).map(|id| (m.to_string(), id))
        })
        .collect()
}

/// Replays every commit of `head`'s first-parent history that touched the changelog of the
/// benchmark tree at `tree` (repository-relative, e.g. `inferencex-e2e`; empty = the repository
/// itself: its `perf-changelog.yaml` and its `configs/`), in order, on `threads` threads (each
/// takes a contiguous slice of the history).
pub fn replay_tree<H: History>(
    repo: &H,
    head: Oid,
    tree: &str,
    dialect: Dialect,
    threads: usize,
) -> Result<Vec<CommitVerdict>, H::Error> {
    let changelog = in_tree(tree, CHANGELOG_PATH);
    let commits = repo.commits_touching(head, &changelog)?;
    let threads = threads.clamp(1, 16).min(commits.len().max(1));
    if threads == 1 {
        return replay_commits(repo, &commits, tree, dialect);
    }
    let chunk = commits.len().div_ceil(threads);
    let results: Vec<Result<Vec<CommitVerdict>, H::Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = commits
            .chunks(chunk)
            .map(|part| {
                let r = repo.fork();
                s.spawn(move || replay_commits(&r?, part, tree, dialect))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(H::thread_panicked())))
            .collect()
    });
    let mut out = Vec::with_capacity(commits.len());
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

/// Master keys of one file (top-level keys in order), or the load error.
type FileKeys = Result<Vec<String>, KeyError>;

fn replay_commits<H: History>(
    repo: &H,
    commits: &[CommitInfo],
    tree: &str,
    dialect: Dialect,
) -> Result<Vec<CommitVerdict>, H::Error> {
    let changelog = in_tree(tree, CHANGELOG_PATH);
    let mut parsed: HashMap<Oid, Result<Parsed, StrictError>> = HashMap::new();
    let mut blobs: HashMap<Oid, Vec<u8>> = HashMap::new();
    // Per file version: a commit usually changes one of the two masters, not both.
    let mut master_files: HashMap<Oid, FileKeys> = HashMap::new();
    let mut out = Vec::with_capacity(commits.len());
    for c in commits.iter().cloned() {
        let head_id = repo.blob_id_at(c.id, &changelog)?;
        let base_id = match c.parent {
            Some(p) => repo.blob_id_at(p, &changelog)?,
            None => None,
        };
        for id in [head_id, base_id].into_iter().flatten() {
            if let std::collections::hash_map::Entry::Vacant(v) = blobs.entry(id) {
                v.insert(repo.blob(id)?);
            }
        }
        let head_raw: &[u8] = head_id
            .and_then(|id| blobs.get(&id))
            .map(Vec::as_slice)
            .unwrap_or(b"");
        let base_raw: Option<&[u8]> = base_id.and_then(|id| blobs.get(&id)).map(Vec::as_slice);

        // Strict: base-read, base-parse, head-parse, compare, raw.
        let strict = match (base_id, base_raw) {
            (Some(bid), Some(base_raw)) => {
                for (id, raw) in [(bid, base_raw), (head_id.unwrap_or(bid), head_raw)] {
                    parsed
                        .entry(id)
                        .or_insert_with(|| parse_changelog(raw, crate::CHANGELOG_PATH, dialect));
                }
                let b = &parsed[&bid];
                let h = head_id.map(|id| &parsed[&id]);
                match (b, h) {
                    (Err(e), _) => Err((StrictStage::BaseParse, e.clone())),
                    (_, None) => Err((
                        StrictStage::HeadParse,
                        StrictError {
                            code: codes::HEAD_READ,
                            message: "the changelog was deleted".into(),
                            line: None,
                            help: None,
                        },
                    )),
                    (_, Some(Err(e))) => Err((StrictStage::HeadParse, e.clone())),
                    (Ok(b), Some(Ok(h))) => check_parsed(base_raw, b, head_raw, h, LinkMode::Main),
                }
            }
            _ => Err((
                StrictStage::BaseRead,
                StrictError {
                    code: codes::BASE_READ,
                    message: "perf-changelog.yaml does not exist at the base".into(),
                    line: None,
                    help: None,
                },
            )),
        };

        let gate_res = gate(
            base_raw,
            head_raw,
            CHANGELOG_PATH,
            dialect,
            Modifiers::default(),
        );
        let keys = match &gate_res {
            Err(_) => None,
            Ok(added) => {
                let ids = master_ids(repo, c.id, tree)?;
                let mut per_file: Vec<(String, Vec<String>)> = Vec::new();
                let mut err: Option<KeyError> = None;
                for (p, id) in &ids {
                    let Some(id) = id else {
                        err = Some(KeyError {
                            code: codes::MASTER_CONFIGS,
                            message: format!("Input file '{p}' does not exist."),
                            help: None,
                        });
                        break;
                    };
                    if !master_files.contains_key(id) {
                        let text = String::from_utf8_lossy(&repo.blob(*id)?).into_owned();
                        let keys = MasterKeys::load(&[(p.as_str(), text.as_str())])
                            .map(|m| m.keys().to_vec());
                        master_files.insert(*id, keys);
                    }
                    match &master_files[id] {
                        Ok(k) => per_file.push((p.clone(), k.clone())),
                        Err(e) => {
                            err = Some(e.clone());
                            break;
                        }
                    }
                }
                let merged = match err {
                    Some(e) => Err(e),
                    None => MasterKeys::merge(&per_file),
                };
                Some(match merged {
                    Err(e) => Err(e),
                    Ok(m) => added
                        .entries
                        .iter()
                        .try_for_each(|e| resolve_keys(&e.config_keys, &m).map(|_| ())),
                })
            }
        };
        // Keep memory flat: only the newest version is the next commit's base.
        if let Some(b) = base_id
            && Some(b) != head_id
        {
            parsed.remove(&b);
            blobs.remove(&b);
        }
        out.push(CommitVerdict {
            commit: c.id,
            parent: c.parent,
            summary: c.summary,
            strict,
            gate: gate_res.map(|a| a.entries.len()),
            keys,
        });
    }
    Ok(out)
}
