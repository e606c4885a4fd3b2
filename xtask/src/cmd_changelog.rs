//! `cargo xtask changelog …` and `install-merge-driver` (owner: changelog).

use crate::output::{self, Format};
use anyhow::{Context, anyhow, bail};
use infx_changelog::PlanOptions;
use infx_changelog::{
    CheckOptions, Dialect, GitOperation, LinkMode, MasterKeys, MergeOutcome, Mode, Modifiers,
};
use infx_git::{Oid, Repo};
use infx_report::SourceMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeArg {
    /// Upstream merge-time rules: base is a byte prefix, one blank line between entries,
    /// only pr-link lines may change, placeholder rules.
    Strict,
    /// Upstream CI gate: no deleted non-blank line, the added lines parse as entries.
    Gate,
    /// Both rule sets.
    Both,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DialectArg {
    /// August 2026 upstream (`no-evals` unknown).
    Aug,
    /// October 2026 upstream (`no-evals` allowed).
    Oct,
}

impl From<DialectArg> for Dialect {
    fn from(d: DialectArg) -> Self {
        match d {
            DialectArg::Aug => Dialect::Aug,
            DialectArg::Oct => Dialect::Oct,
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct RepoArgs {
    /// The git repository (default: the one containing the current directory).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// Schema generation to follow.
    #[arg(long, value_enum, default_value_t = DialectArg::Oct)]
    pub dialect: DialectArg,
}

#[derive(clap::Subcommand, Debug)]
pub enum ChangelogCommand {
    /// Check the changelog against the base (append-only rules, new entries, their config-keys).
    Check(CheckArgs),
    /// Print the sweep plan (upstream process_changelog.py JSON) of the change base..head.
    Plan(PlanArgs),
    /// git merge driver: `merge-driver %O %A %B [%P]`; writes the result to %A.
    MergeDriver {
        /// The common ancestor's version (%O).
        ancestor: PathBuf,
        /// Our version (%A); the merge result is written here.
        ours: PathBuf,
        /// Their version (%B).
        theirs: PathBuf,
        /// The path being merged (%P), for messages.
        path: Option<String>,
    },
    /// Replay every changelog commit of the history: strict, gate and key verdicts.
    Replay {
        #[command(flatten)]
        repo: RepoArgs,
        /// The last commit of the history replayed (first parents back to the changelog's
        /// first commit).
        #[arg(long, default_value = "HEAD")]
        head: String,
        /// Print one line per commit.
        #[arg(long)]
        verbose: bool,
    },
}

/// The eval-modifier PR labels (`Modifiers`), which `check` and `plan` both take.
#[derive(clap::Args, Debug)]
pub struct LabelArgs {
    /// The PR carries the `all-evals` label (eval rows for every eligible point).
    #[arg(long)]
    pub all_evals: bool,
    /// The PR carries the `evals-only` label (only the eval rows run).
    #[arg(long)]
    pub evals_only: bool,
}

impl LabelArgs {
    fn modifiers(&self) -> Modifiers {
        Modifiers {
            all_evals: self.all_evals,
            evals_only: self.evals_only,
        }
    }
}

/// `changelog check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// Base revision (default: as validate finds it, the merge-base of the head with the first
    /// of origin/main, upstream/main, main that exists; `REV...` = the merge-base with REV).
    #[arg(long)]
    pub base: Option<String>,
    /// Head revision (default: the working-tree file).
    #[arg(long)]
    pub head: Option<String>,
    /// Rule set.
    #[arg(long, value_enum, default_value_t = ModeArg::Strict)]
    pub mode: ModeArg,
    /// The PR number: appended entries must use its URL or an XXX placeholder.
    #[arg(long, conflicts_with = "main")]
    pub pr: Option<u64>,
    /// Judge as a commit on main: appended entries need canonical links.
    #[arg(long)]
    pub main: bool,
    #[command(flatten)]
    pub labels: LabelArgs,
    /// Output format for diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Also compute the sweep plan of the change (needs --head) and write its JSON here
    /// (`-` = stdout, after the diagnostics).
    #[arg(long, requires = "head")]
    pub plan_out: Option<PathBuf>,
}

/// `changelog plan`.
#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// Base revision (default: as validate finds it, the merge-base of HEAD with the
    /// upstream branch; with nothing committed since, the last commit that changed the
    /// changelog and its parent, as validate on a clean clone).
    #[arg(long)]
    pub base: Option<String>,
    /// Head revision (default: HEAD; the plan is computed from commits, so uncommitted
    /// changelog edits are not in it).
    #[arg(long, default_value = "HEAD", hide_default_value = true)]
    pub head: String,
    #[command(flatten)]
    pub labels: LabelArgs,
    /// Keep only the concurrencies the new entries name (upstream's `--trim-conc`).
    #[arg(long)]
    pub trim_conc: bool,
}

#[derive(clap::Args, Debug)]
pub struct InstallArgs {
    /// Repository to configure (default: the one containing the current directory).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// Command that runs xtask (default `cargo xtask`); e.g. a built binary path.
    #[arg(long, default_value = "cargo xtask")]
    pub command: String,
}

fn open(repo: &Option<PathBuf>) -> anyhow::Result<Repo> {
    let here = match repo {
        Some(p) => p.clone(),
        None => std::env::current_dir()?,
    };
    Repo::discover(&here).map_err(|e| anyhow!("{e}"))
}

fn commit(repo: &Repo, rev: &str) -> anyhow::Result<Oid> {
    repo.resolve_commit(rev).map_err(|e| anyhow!("{e}"))
}

/// The base of the change ending at `head`: infx-git's one resolution (docs/diff.md, "Base"),
/// the one `validate`, `diff-check` and `review check` use too, so every command picks the same
/// commit in one clone. The changelog is read from a commit, so the base must be one.
fn change_base(repo: &Repo, base: Option<&str>, head: Oid) -> anyhow::Result<Oid> {
    let upstreams = infx_git::DEFAULT_UPSTREAMS.map(String::from);
    let resolved = repo
        .resolve_change_base(base, &upstreams, Some(head))
        .map_err(|e| anyhow!("{e}"))?;
    resolved.commit.ok_or_else(|| {
        anyhow!(
            "the base `{}` is a tree, not a commit: pass --base <commit>",
            base.unwrap_or_default()
        )
    })
}

/// The base validate compares the working tree with, for commands whose --base is optional.
fn default_base(repo: &Repo) -> anyhow::Result<Oid> {
    change_base(repo, None, commit(repo, "HEAD")?)
}

/// Where the tree keeps its changelog at `head`, repository-relative: the benchmark tree
/// validate finds (`inferencex-e2e/` when the checkout has one), else the repository root.
fn changelog_tree(repo: &Repo, head: Oid) -> String {
    let Some(workdir) = repo.workdir() else {
        return String::new();
    };
    let tree = crate::paths::tree_of(&workdir);
    let rel = tree
        .strip_prefix(&workdir)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    let kept_there = !rel.is_empty()
        && repo
            .blob_id_at(head, &format!("{rel}/{}", infx_changelog::CHANGELOG_PATH))
            .is_ok_and(|id| id.is_some());
    if kept_there { rel } else { String::new() }
}

pub fn run(cmd: ChangelogCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ChangelogCommand::Check(args) => check(args),
        ChangelogCommand::Plan(args) => plan(args),
        ChangelogCommand::MergeDriver {
            ancestor,
            ours,
            theirs,
            path,
        } => merge_driver(&ancestor, &ours, &theirs, path.as_deref()),
        ChangelogCommand::Replay {
            repo,
            head,
            verbose,
        } => replay(&repo, &head, verbose),
    }
}

/// The changelog of the change's head and what the check reads with it.
struct HeadChangelog {
    /// Repository-relative.
    path: PathBuf,
    bytes: Vec<u8>,
    /// The config-keys the entries may name, or why they cannot be resolved.
    master: Result<MasterKeys, String>,
    /// The head revision's trees, parsed once, when the plan needs them.
    inputs: Option<infx_changelog::RevisionInputs>,
}

/// The changelog at `head`, or the working-tree file when there is no head revision.
fn head_changelog(r: &Repo, head: Option<Oid>, plans: bool) -> anyhow::Result<HeadChangelog> {
    if let Some(h) = head {
        let b = r
            .blob_at_layout(h, infx_changelog::CHANGELOG_PATH)
            .map_err(|e| anyhow!("{e}"))?
            .ok_or_else(|| anyhow!("perf-changelog.yaml not found at {h}"))?;
        if !plans {
            let master = master_keys_at(r, h);
            return Ok(HeadChangelog {
                path: PathBuf::from(&b.path),
                bytes: b.data,
                master,
                inputs: None,
            });
        }
        // The plan needs the full trees anyway: parse once, share the keys.
        let inputs = infx_validate::history::revision_inputs(r, h).map_err(|e| anyhow!(e))?;
        let master = inputs
            .configs()
            .map(|c| MasterKeys::from_keys(c.keys().map(str::to_string)));
        return Ok(HeadChangelog {
            path: PathBuf::from(&b.path),
            bytes: b.data,
            master,
            inputs: Some(inputs),
        });
    }
    let wd = r
        .workdir()
        .ok_or_else(|| anyhow!("bare repository: pass --head"))?;
    let rel = infx_git::layout_candidates(infx_changelog::CHANGELOG_PATH)
        .into_iter()
        .find(|c| wd.join(c).is_file())
        .ok_or_else(|| anyhow!("perf-changelog.yaml not found in {}", wd.display()))?;
    let bytes = infx_fs::read(&wd.join(&rel))?;
    let root = Path::new(&rel).parent().unwrap_or(Path::new(""));
    Ok(HeadChangelog {
        path: PathBuf::from(&rel),
        bytes,
        master: master_keys_from_dir(&wd.join(root)),
        inputs: None,
    })
}

fn check_options(a: &CheckArgs) -> CheckOptions {
    CheckOptions {
        mode: match a.mode {
            ModeArg::Strict => Mode::Strict,
            ModeArg::Gate => Mode::Gate,
            ModeArg::Both => Mode::Both,
        },
        links: Some(match (a.pr, a.main) {
            (Some(n), _) => LinkMode::Pr(n),
            (None, true) => LinkMode::Main,
            (None, false) => LinkMode::Local,
        }),
        dialect: a.repo.dialect.into(),
        modifiers: a.labels.modifiers(),
    }
}

/// `changelog check`.
fn check(a: CheckArgs) -> anyhow::Result<ExitCode> {
    let r = open(&a.repo.repo)?;
    let dialect: Dialect = a.repo.dialect.into();
    // Upstream's gate runs process_changelog.py, which plans the sweep (and generates its rows)
    // for every change: gate mode plans too, `--plan-out` only decides whether the plan is
    // written (docs/changelog.md, gate mode). The plan is computed from commits: it needs --head.
    let gate_mode = matches!(a.mode, ModeArg::Gate | ModeArg::Both);
    let plans = a.plan_out.is_some() || (gate_mode && a.head.is_some());
    if gate_mode && a.head.is_none() {
        eprintln!(
            "note: changelog check --mode gate without --head does not compute the sweep plan (upstream's process_changelog step); commit and pass --head REV to run it"
        );
    }
    let head_id = match &a.head {
        Some(h) => Some(commit(&r, h)?),
        None => None,
    };
    let anchor = match head_id {
        Some(h) => h,
        None => commit(&r, "HEAD")?,
    };
    let base_id = change_base(&r, a.base.as_deref(), anchor)?;
    let base_blob = r
        .blob_at_layout(base_id, infx_changelog::CHANGELOG_PATH)
        .map_err(|e| anyhow!("{e}"))?;
    let base_bytes = base_blob.as_ref().map(|b| b.data.as_slice());
    let head = head_changelog(&r, head_id, plans)?;
    let mut diags = Vec::new();
    let master = match head.master {
        Ok(m) => Some(m),
        Err(e) => {
            diags.push(
                infx_report::Diagnostic::error(
                    infx_changelog::codes::MASTER_CONFIGS,
                    format!("cannot resolve config-keys: {e}"),
                )
                .with_help("fix the master configs first (cargo xtask validate reports them)"),
            );
            None
        }
    };
    diags.extend(infx_changelog::check_change(
        base_bytes,
        &head.bytes,
        &head.path,
        master.as_ref(),
        &check_options(&a),
    ));
    // Gate mode runs every config rule on the entries it plans; a finding stops it before
    // planning, as upstream's gate stops loading the configs (docs/changelog.md, gate mode).
    let mut config_sources = Vec::new();
    let mut configs_fail = false;
    if gate_mode && let (Some(inputs), Some(keys)) = (&head.inputs, &master) {
        let planned = crate::gate_configs::planned_keys(base_bytes, &head.bytes, dialect, keys);
        let (found, texts) = crate::gate_configs::planned_entry_findings(inputs, &planned);
        configs_fail = !found.is_empty();
        diags.extend(found);
        config_sources = texts;
    }
    if let (true, false, Some(h)) = (plans, configs_fail, head_id) {
        let between = (base_id, h);
        if let Err(d) = write_check_plan(&r, &a, between, head.inputs, &head.path)? {
            diags.push(d);
        }
    }
    let mut sources = SourceMap::default();
    sources.insert(
        head.path.clone(),
        String::from_utf8_lossy(&head.bytes).into_owned(),
    );
    for (path, text) in config_sources {
        sources.insert(path, text);
    }
    if diags.is_empty() {
        if a.format == Format::Human {
            println!("changelog: ok ({} against {base_id})", head.path.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", output::render(&diags, &sources, a.format));
    Ok(ExitCode::from(1))
}

/// The sweep plan of `changelog check` from base to head, written where `--plan-out` says
/// (nowhere without it: gate mode plans to find planning faults). `Ok(Err(_))` is a planning
/// fault, reported at the changelog.
fn write_check_plan(
    r: &Repo,
    a: &CheckArgs,
    (base_id, head_id): (Oid, Oid),
    head_inputs: Option<infx_changelog::RevisionInputs>,
    head_path: &Path,
) -> anyhow::Result<Result<(), infx_report::Diagnostic>> {
    let opts = PlanOptions {
        modifiers: a.labels.modifiers(),
        trim_conc: false,
    };
    let base_label = a.base.clone().unwrap_or_else(|| base_id.to_string());
    let head_label = a.head.clone().unwrap_or_default();
    let planned = infx_validate::history::plan_between(
        r,
        base_id,
        head_id,
        &base_label,
        &head_label,
        opts,
        a.repo.dialect.into(),
        head_inputs,
    );
    match planned {
        Ok(v) => {
            let json = infx_report::json_safe(serde_json::to_string(&v)?);
            match &a.plan_out {
                Some(out) if out.as_os_str() == "-" => println!("{json}"),
                Some(out) => std::fs::write(out, json + "\n")?,
                None => {}
            }
            Ok(Ok(()))
        }
        Err(e) => Ok(Err(infx_report::Diagnostic::error(
            e.stage.code(),
            e.message,
        )
        .with_path(head_path))),
    }
}

/// `changelog plan`.
fn plan(a: PlanArgs) -> anyhow::Result<ExitCode> {
    let r = open(&a.repo.repo)?;
    let mut h = commit(&r, &a.head)?;
    let mut head_name = a.head.clone();
    let (b, base) = match a.base {
        Some(base) => (commit(&r, &base)?, base),
        None => {
            let mut b = default_base(&r)?;
            // Nothing committed since the base (a clean clone of main): the last commit that
            // changed the changelog stands in, as it does for validate (docs/diff.md, "The
            // change").
            if b == h
                && a.head == "HEAD"
                && let Some(workdir) = r.workdir()
            {
                let tree = changelog_tree(&r, h);
                let rel = Path::new(&tree).join(infx_changelog::CHANGELOG_PATH);
                // A changelog born in the root commit has the empty tree for a parent: no
                // commit to plan against, so the plain default stands.
                if let Ok(Some((parent, last))) = infx_diff::last_commit_touching(&workdir, &rel)
                    && let (Ok(pb), Ok(lh)) = (commit(&r, &parent), commit(&r, &last))
                {
                    (b, h) = (pb, lh);
                    head_name = last;
                }
            }
            (b, b.to_string())
        }
    };
    let opts = PlanOptions {
        modifiers: a.labels.modifiers(),
        trim_conc: a.trim_conc,
    };
    let dialect = a.repo.dialect.into();
    match infx_validate::history::plan_between(&r, b, h, &base, &head_name, opts, dialect, None) {
        Ok(v) => {
            println!("{}", infx_report::json_safe(serde_json::to_string(&v)?));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!(
                "error[{}]: {}",
                e.stage.code(),
                crate::hygiene::escape_line(&e.message)
            );
            Ok(ExitCode::from(1))
        }
    }
}

/// `changelog merge-driver %O %A %B [%P]`.
fn merge_driver(
    ancestor: &Path,
    ours: &Path,
    theirs: &Path,
    path: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let read =
        |p: &Path| infx_fs::read_unconfined(p).with_context(|| format!("reading {}", p.display()));
    let (o, a, b) = (read(ancestor)?, read(ours)?, read(theirs)?);
    // Which side is upstream follows from what git is doing (docs/changelog.md, "The merge
    // driver"), never from whether HEAD happens to be detached.
    let keep = git_operation().keep();
    match infx_changelog::merge(&o, &a, &b, keep, Dialect::Oct) {
        MergeOutcome::Clean(bytes) => {
            std::fs::write(ours, bytes)?;
            Ok(ExitCode::SUCCESS)
        }
        MergeOutcome::Conflict { text, reason } => {
            std::fs::write(ours, text)?;
            let what = format!(
                "{}: {reason}",
                path.unwrap_or(infx_config::layout::CHANGELOG)
            );
            eprintln!(
                "changelog merge driver: {}",
                crate::hygiene::escape_line(&what)
            );
            Ok(ExitCode::from(1))
        }
    }
}

fn pass(b: bool) -> &'static str {
    if b { "pass" } else { "fail" }
}

/// Our three verdict columns for one commit: `replay --verbose` prints them, and the
/// conformance harness compares them with upstream's.
pub fn columns(v: &infx_changelog::CommitVerdict) -> (&'static str, &'static str, &'static str) {
    let strict = pass(v.strict.is_ok());
    let gate = pass(v.gate.is_ok());
    let keys = match &v.keys {
        None => "n/a",
        Some(r) => pass(r.is_ok()),
    };
    (strict, gate, keys)
}

/// `changelog replay`.
fn replay(repo: &RepoArgs, head: &str, verbose: bool) -> anyhow::Result<ExitCode> {
    let r = open(&repo.repo)?;
    let h = commit(&r, head)?;
    let tree = changelog_tree(&r, h);
    let start = std::time::Instant::now();
    let v = infx_validate::history::replay_tree(&r, h, &tree, repo.dialect.into(), threads())
        .map_err(|e| anyhow!("{e}"))?;
    let el = start.elapsed();
    let count =
        |f: &dyn Fn(&infx_changelog::CommitVerdict) -> bool| v.iter().filter(|x| f(x)).count();
    if verbose {
        for x in &v {
            let (s, g, k) = columns(x);
            println!(
                "{} strict={s} gate_changelog={g} gate_keys={k} {}",
                x.commit, x.summary
            );
        }
    }
    let changelog = if tree.is_empty() {
        infx_changelog::CHANGELOG_PATH.to_string()
    } else {
        format!("{tree}/{}", infx_changelog::CHANGELOG_PATH)
    };
    println!(
        "replayed {} commits of {} in {:.2} s: strict {} pass, gate_changelog {} pass, gate_keys {} pass",
        v.len(),
        crate::hygiene::escape_line(&changelog),
        el.as_secs_f64(),
        count(&|x| x.strict.is_ok()),
        count(&|x| x.gate.is_ok()),
        count(&|x| matches!(x.keys, Some(Ok(())))),
    );
    Ok(ExitCode::SUCCESS)
}

/// What git is doing while it runs the merge driver (the driver's working directory is the
/// work tree), asked in the order git's own status asks it: a merge in progress first, then a
/// rebase, then the rest (docs/changelog.md, "The merge driver"). A merge step inside
/// `git rebase --rebase-merges` leaves both `MERGE_HEAD` and `rebase-merge/`: it is a merge,
/// "ours" the rewritten PR side. A rebase leaves `rebase-merge/` or `rebase-apply/` (also
/// `git am`); `git merge` and `git pull` have no `MERGE_HEAD` yet while the driver runs but
/// export `GITHEAD_<oid>=<name>` for the merged-in side and set `GIT_REFLOG_ACTION` to
/// `merge …`/`pull …`; a cherry-pick or revert has none of these.
fn git_operation() -> GitOperation {
    let repo = std::env::current_dir()
        .ok()
        .and_then(|d| Repo::discover(&d).ok());
    let Some(repo) = repo else {
        return GitOperation::Apply;
    };
    let dir = repo.git_dir();
    let upstream_short = repo
        .default_upstream()
        .map(|u| branch_short_name(&u).to_string());
    let is_upstream = |name: &str| {
        let short = branch_short_name(name);
        short == "main" || short == "master" || upstream_short.as_deref() == Some(short)
    };
    let rebasing = dir.join("rebase-merge").is_dir() || dir.join("rebase-apply").is_dir();
    if let Some(merged) = read_oid(&dir.join("MERGE_HEAD")) {
        return GitOperation::Merge {
            current_is_upstream: !rebasing
                && repo.current_branch().is_some_and(|c| is_upstream(&c)),
            merged_is_upstream: merged_is_upstream(&repo, merged, rebasing, &is_upstream),
        };
    }
    if rebasing {
        return GitOperation::Rebase;
    }
    let merged: Vec<String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("GITHEAD_"))
        .map(|(_, v)| v)
        .collect();
    let action = std::env::var("GIT_REFLOG_ACTION").unwrap_or_default();
    let merging = !merged.is_empty()
        || action.starts_with("merge")
        || (action.starts_with("pull") && !action.contains("--rebase"));
    if !merging {
        return GitOperation::Apply;
    }
    GitOperation::Merge {
        current_is_upstream: repo.current_branch().is_some_and(|c| is_upstream(&c)),
        merged_is_upstream: merged.iter().any(|m| is_upstream(m)),
    }
}

/// The first line of a git state file (`MERGE_HEAD`, `rebase-merge/onto`) as a commit id.
fn read_oid(path: &std::path::Path) -> Option<Oid> {
    let text = std::fs::read_to_string(path).ok()?;
    Oid::from_str(text.lines().next()?.trim()).ok()
}

/// Whether the commit being merged in is upstream history: inside a rebase, history of the
/// commit being rebased onto (`rebase-merge/onto`); else the tip, or history, of an upstream
/// branch (`main`, `master`, the configured upstream).
fn merged_is_upstream(
    repo: &Repo,
    merged: Oid,
    rebasing: bool,
    is_upstream: &dyn Fn(&str) -> bool,
) -> bool {
    let g = repo.git2();
    let within = |tip: Oid| tip == merged || g.graph_descendant_of(tip, merged).unwrap_or(false);
    let dir = repo.git_dir();
    if rebasing {
        let onto = read_oid(&dir.join("rebase-merge/onto"))
            .or_else(|| read_oid(&dir.join("rebase-apply/onto")));
        return onto.is_some_and(within);
    }
    let Ok(refs) = g.references() else {
        return false;
    };
    refs.flatten()
        .filter(|r| r.is_branch() || r.is_remote())
        .filter(|r| r.name().ok().is_some_and(is_upstream))
        .filter_map(|r| r.target())
        .any(within)
}

/// `main` from `main`, `origin/main`, `refs/remotes/origin/main` or git pull's
/// `branch 'main' of <url>`.
fn branch_short_name(name: &str) -> &str {
    let name = match name.strip_prefix("branch '") {
        Some(rest) => rest.split('\'').next().unwrap_or(rest),
        None => name,
    };
    name.rsplit('/').next().unwrap_or(name)
}

/// Master keys from the master configs' texts, by repository-relative path.
fn load_master_keys(texts: &[(&str, String)]) -> Result<MasterKeys, String> {
    let borrowed: Vec<_> = texts.iter().map(|(p, t)| (*p, t.as_str())).collect();
    MasterKeys::load(&borrowed).map_err(|e| e.message)
}

/// Master keys at a revision (layout-aware, legacy `.github/configs/` too), top keys only.
fn master_keys_at(r: &Repo, commit: Oid) -> Result<MasterKeys, String> {
    let mut texts = Vec::new();
    for m in infx_changelog::MASTER_CONFIGS {
        let blob = match r.blob_at_layout(commit, m).map_err(|e| e.to_string())? {
            Some(b) => Some(b),
            None => r
                .blob_at(commit, &infx_config::layout::legacy_configs_path(m))
                .map_err(|e| e.to_string())?,
        };
        let b = blob.ok_or_else(|| format!("Input file '{m}' does not exist."))?;
        texts.push((m, String::from_utf8_lossy(&b.data).into_owned()));
    }
    load_master_keys(&texts)
}

/// Master keys from a checkout directory (`<dir>/configs/*-master.yaml`).
fn master_keys_from_dir(dir: &Path) -> Result<MasterKeys, String> {
    let mut texts = Vec::new();
    for m in infx_changelog::MASTER_CONFIGS {
        let p = dir.join(m);
        let t = infx_fs::read_to_string(&p)
            .map_err(|e| format!("Input file '{m}' does not exist. ({e})"))?;
        texts.push((m, t));
    }
    load_master_keys(&texts)
}

/// The `.gitattributes` line that routes the changelog through the driver.
/// The `.gitattributes` lines that route the changelog, in either layout, to the merge driver.
pub fn attributes() -> [String; 2] {
    use infx_config::layout::{BUNDLED_TREE, CHANGELOG};
    [
        format!("{CHANGELOG} merge=infx-changelog"),
        format!("{BUNDLED_TREE}/{CHANGELOG} merge=infx-changelog"),
    ]
}

pub fn install_merge_driver(args: InstallArgs) -> anyhow::Result<ExitCode> {
    let here = match &args.repo {
        Some(p) => p.clone(),
        None => std::env::current_dir()?,
    };
    let r = Repo::discover(&here).map_err(|e| anyhow!("{e}"))?;
    let wd = r.workdir().ok_or_else(|| anyhow!("bare repository"))?;
    let git = |a: &[&str]| -> anyhow::Result<()> {
        let mut full = vec!["-C".to_string(), wd.display().to_string()];
        full.extend(a.iter().map(|s| s.to_string()));
        duct::cmd("git", full)
            .run()
            .map(|_| ())
            .context("git config")
    };
    git(&[
        "config",
        "merge.infx-changelog.name",
        "infx perf-changelog append merge",
    ])?;
    git(&[
        "config",
        "merge.infx-changelog.driver",
        &format!("{} changelog merge-driver %O %A %B %P", args.command),
    ])?;
    let attrs = wd.join(".gitattributes");
    let existing = infx_fs::read_to_string(&attrs).unwrap_or_default();
    let missing: Vec<String> = attributes()
        .into_iter()
        .filter(|l| !existing.lines().any(|x| x.trim() == l))
        .collect();
    if !missing.is_empty() {
        bail!(
            "the merge driver is configured, but {} lacks: {}; add these lines (they are committed, so everyone gets them)",
            attrs.display(),
            missing.join(" | ")
        );
    }
    println!(
        "merge driver infx-changelog installed in {} ({})",
        wd.display(),
        args.command
    );
    Ok(ExitCode::SUCCESS)
}

/// Worker threads for replays: the machine's parallelism (`INFX_THREADS` overrides).
pub fn threads() -> usize {
    std::env::var("INFX_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}
