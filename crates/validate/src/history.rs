//! Reading git history for the changelog: the one place that reads a revision's changelog and
//! generation inputs, and the history a replay walks. `infx-changelog` stays pure (its lib.rs):
//! it takes what is read here (docs/architecture.md, "Crates and their dependencies").

use infx_changelog::CommitVerdict;
use infx_changelog::RevisionInputs;
use infx_changelog::{PlanError, PlanOptions, PlanStage};
use infx_git::{CommitInfo, GitError, Oid, Repo};

/// Check 12 through `infx-changelog`'s plan of `base..HEAD` (committed history only): `Err` with
/// upstream's message when the append-only rules fail; `None` when it cannot be decided here
/// (another stage failed: the changelog check reports that).
pub(crate) fn append_only_verdict(top: &std::path::Path, base: &str) -> Option<Result<(), String>> {
    let r = infx_git::Repo::open(top).ok()?;
    let (b, h) = (r.resolve_commit(base).ok()?, r.resolve_commit("HEAD").ok()?);
    let opts = PlanOptions::default();
    let dialect = infx_config::Dialect::Oct;
    match plan_between(&r, b, h, base, "HEAD", opts, dialect, None) {
        Ok(_) => Some(Ok(())),
        Err(e) if e.stage == infx_changelog::PlanStage::AppendOnly => Some(Err(e.message)),
        Err(_) => None,
    }
}

/// The generation inputs at `commit`: `configs/{amd,nvidia}-master.yaml` and
/// `configs/runners.yaml` (nested `inferencex-e2e/` layout first, then the root, then the legacy
/// `.github/configs/`).
pub fn revision_inputs(repo: &Repo, commit: Oid) -> Result<RevisionInputs, String> {
    revision_inputs_from(repo, commit, &[])
}

/// [`revision_inputs`], taking over from `previous` (the same files parsed at another revision,
/// matched by their path's end) what did not change.
pub fn revision_inputs_from(
    repo: &Repo,
    commit: Oid,
    previous: &[&infx_yaml::Document],
) -> Result<RevisionInputs, String> {
    let read = |p: &str| {
        if let Some(b) = repo.blob_at_layout(commit, p).map_err(|e| e.to_string())? {
            return Ok(Some(b.data));
        }
        let legacy = infx_config::layout::legacy_configs_path(p);
        Ok(repo
            .blob_at(commit, &legacy)
            .map_err(|e| e.to_string())?
            .map(|b| b.data))
    };
    let previous = |p: &str| previous.iter().copied().find(|d| d.path.ends_with(p));
    RevisionInputs::read_with_previous(read, previous)
}

/// The plan of the change `base..head` of `repo` ([`infx_changelog::plan_between`]
/// over the revisions read here), reusing `head_inputs` when the caller already loaded them.
#[allow(clippy::too_many_arguments)]
pub fn plan_between(
    repo: &Repo,
    base: Oid,
    head: Oid,
    base_label: &str,
    head_label: &str,
    opts: PlanOptions,
    dialect: infx_config::Dialect,
    head_inputs: Option<RevisionInputs>,
) -> Result<serde_json::Value, PlanError> {
    let read = |c: Oid| -> Result<Option<Vec<u8>>, PlanError> {
        Ok(repo
            .blob_at_layout(c, infx_changelog::CHANGELOG_PATH)
            .map_err(|e| PlanError {
                stage: PlanStage::Read,
                message: e.to_string(),
            })?
            .map(|b| b.data))
    };
    let base_raw = read(base)?;
    let head_raw = read(head)?.ok_or_else(|| PlanError {
        stage: PlanStage::Read,
        message: format!(
            "{} does not exist at {head_label}",
            infx_changelog::CHANGELOG_PATH
        ),
    })?;
    infx_changelog::plan_between(
        base_raw.as_deref(),
        &head_raw,
        base_label,
        head_label,
        opts,
        dialect,
        || match head_inputs {
            Some(h) => Ok(h),
            None => revision_inputs(repo, head),
        },
        || revision_inputs(repo, base),
    )
}

/// A repository (borrowed or owned) as the history [`infx_changelog::replay_tree`] walks.
struct GitHistory<R>(R);

impl<R: std::borrow::Borrow<Repo>> infx_changelog::History for GitHistory<R> {
    type Error = GitError;
    type Fork = GitHistory<Repo>;
    fn commits_touching(&self, head: Oid, path: &str) -> Result<Vec<CommitInfo>, GitError> {
        self.0.borrow().commits_touching(head, path)
    }
    fn blob_id_at(&self, commit: Oid, path: &str) -> Result<Option<Oid>, GitError> {
        self.0.borrow().blob_id_at(commit, path)
    }
    fn blob(&self, id: Oid) -> Result<Vec<u8>, GitError> {
        self.0.borrow().blob(id)
    }
    fn fork(&self) -> Result<GitHistory<Repo>, GitError> {
        Repo::open(&self.0.borrow().git_dir()).map(GitHistory)
    }
    fn thread_panicked() -> GitError {
        // Replay errors are printed as text only (`changelog replay`, conformance), never as a
        // coded diagnostic; a replay thread reads the history's objects, so `git/object`.
        GitError {
            code: infx_git::codes::OBJECT,
            message: "a replay thread panicked".into(),
            help: None,
        }
    }
}

/// [`infx_changelog::replay_tree`] over the history of `repo` (each further replay
/// thread opens its own handle at the git directory).
pub fn replay_tree(
    repo: &Repo,
    head: Oid,
    tree: &str,
    dialect: infx_config::Dialect,
    threads: usize,
) -> Result<Vec<CommitVerdict>, GitError> {
    infx_changelog::replay_tree(&GitHistory(repo), head, tree, dialect, threads)
}
