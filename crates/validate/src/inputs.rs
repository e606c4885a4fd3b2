//! The named loaders of `validate` (change, PR context, parse, configs, changelog, review
//! inputs, plan, images): every read of the tree and of git happens here, once, before any
//! check runs (docs/diff.md, "One load"). They return data: what could not be read is kept as
//! its fault, which a check reports; no rule runs here. [`super::pipeline`] schedules them,
//! with the config check beside them; the checks in [`super::checks`] only look at the
//! [`Inputs`] they build.

use super::steps::{self, ChangeInfo};
use super::{Options, contribution, pr};
use infx_changelog::Impact;
use infx_changelog::PrContext;
use infx_config::layout::{self, Role};
use infx_report::Diagnostic;
use infx_yaml::{DocIndex, Document, Loaded, Reuse, load_file_reusing};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Everything the checks of one run look at.
pub struct Inputs {
    pub opts: Options,
    /// The tree, canonical.
    pub root: PathBuf,
    pub change: ChangeInfo,
    pub change_elapsed: Duration,
    pub pr: PrInputs,
    pub yaml: YamlStep,
    /// Parsed YAML that is neither a master config, runners.yaml, a recipe nor a lane block.
    pub docs: Vec<Document>,
    /// Text of the files that failed to parse (their findings still show the source line),
    /// and of the [`CheckedRecipe`]s.
    pub raw_sources: Vec<(PathBuf, Arc<str>)>,
    /// The added recipe files no config references, checked as they were parsed (a change
    /// that adds many), in walk order.
    pub(crate) checked_recipes: Vec<CheckedRecipe>,
    /// The files that failed to read or parse, with the error that stopped each: a later
    /// reader of one takes this error (`DocIndex::with_failures`), not a second parse.
    pub parse_failures: Vec<(PathBuf, Diagnostic)>,
    pub configs: infx_config::LoadedConfigs,
    /// The time of loading the configs from their parsed documents (the config check's).
    pub config_load_elapsed: Duration,
    pub modifiers: infx_changelog::Modifiers,
    pub changelog: steps::ChangelogInputs,
    pub impact: Impact,
    /// Config keys the change touches; `None` = every config.
    pub touched: Option<Vec<String>>,
    /// Configs whose planned rows are shown: the impacted ones, then those the entries name.
    pub shown: Vec<String>,
    /// The sweep plan of the appended entries (coverage compares it with the impact).
    pub planned: Result<infx_changelog::PlannedRows, infx_changelog::PlanError>,
    /// The reviewer checks' inputs (recipes and lane blocks moved here from the parse).
    pub review: infx_review::ReviewInputs,
    /// Findings of loading the review inputs (golden curves, CODEOWNERS).
    pub review_load_findings: Vec<Diagnostic>,
    /// The tree's image pin policy (`infx.yaml`) and the problems of stating it.
    pub pin_policy: (infx_image::PinPolicy, Vec<Diagnostic>),
    /// The base's image sites of the changed files that reference an image by tag only: a pin
    /// the change dropped is found against them (docs/image.md, "Pin policy"). Read on first
    /// use ([`Inputs::base_image_sites`]).
    pub(crate) base_image_sites: std::sync::OnceLock<Vec<infx_image::ImageSite>>,
    /// The base's parses of the large config files the change modified, made during the load
    /// for the base's run (`baseline::parse_ahead`), by tree-relative path.
    pub(crate) base_parses: Vec<(String, Document)>,
    /// The files this run read, while a base may be compared: the base's export needs only
    /// those (docs/baseline.md, "Cost"). `None` = export every file validate could read.
    pub read_log: Option<infx_fs::ReadLog>,
}

/// The PR context: `--labels` / `--pr`, else the `pull_request` event payload.
pub struct PrInputs {
    pub number: Option<u64>,
    pub context: Option<PrContext>,
    pub event_findings: Vec<Diagnostic>,
    pub elapsed: Duration,
}

/// The YAML parse: its findings, how many files, and whether the whole tree was in scope.
pub struct YamlStep {
    pub findings: Vec<Diagnostic>,
    pub files: usize,
    pub whole_tree: bool,
    pub elapsed: Duration,
}

/// The master configs and runners.yaml that exist: every parse scope starts with them.
fn existing_config_files(root: &Path) -> Vec<PathBuf> {
    layout::MASTER_CONFIGS
        .iter()
        .chain([&layout::RUNNERS])
        .map(|r| root.join(r))
        .filter(|p| p.is_file())
        .collect()
}

impl Inputs {
    /// The parsed recipe files and lane blocks, for the readers that need them as recipes
    /// (binder, dry-run): they are not read and parsed again. Built once per run, by
    /// [`super::checks::run_all`], which hands it to every check.
    pub fn recipe_documents(&self) -> infx_yaml::DocIndex<'_> {
        infx_yaml::DocIndex::new(self.review.recipes.iter().chain(&self.review.lanes))
            .with_failures(&self.parse_failures)
    }

    /// [`Self::base_image_sites`]'s, read from git and parsed on first use: by the image check,
    /// which runs beside the base's run, not on the load's path before it
    /// (docs/performance.md, "Threads cost pages"). Empty unless the pin policy is verified.
    pub fn base_image_sites(&self) -> &[infx_image::ImageSite] {
        self.base_image_sites.get_or_init(|| {
            if self.pin_policy.0 != infx_image::PinPolicy::Verified {
                return Vec::new();
            }
            let docs = (self.configs.masters.iter())
                .chain(&self.review.recipes)
                .chain(&self.docs)
                .map(Sited::Parsed)
                .chain(self.checked_recipes.iter().map(Sited::Checked));
            base_sites_of_tag_only(&self.root, &self.change, docs, &self.base_parses)
        })
    }

    /// Every parsed document (for the source map and the allow comments).
    pub fn documents(&self) -> impl Iterator<Item = &Document> {
        parsed_documents(&self.docs, &self.review, &self.configs)
    }
}

/// The config keys the change touches (`None` = every config): the explicit scope's, else
/// those the change's files and its changelog entries name.
pub(crate) fn load_touched(
    opts: &Options,
    root: &Path,
    change: &ChangeInfo,
    configs: &infx_config::LoadedConfigs,
    changelog: &steps::ChangelogInputs,
) -> Option<Vec<String>> {
    match &opts.scope {
        Some(scope) => scope.touched.clone(),
        None => steps::touched_keys(root, change, configs, &changelog.scope.keys, opts.all),
    }
}

/// The recipes of the touched configs join the parsed set (for review and images) in a
/// change-scoped run; returns the time it took.
pub(crate) fn parse_touched_recipes(
    parsed: &mut Parsed,
    opts: &Options,
    root: &Path,
    files: &[PathBuf],
    configs: &infx_config::LoadedConfigs,
    touched: &Option<Vec<String>>,
) -> Duration {
    let t = Instant::now();
    let listed: HashSet<&Path> = files.iter().map(PathBuf::as_path).collect();
    let extra: Vec<PathBuf> = steps::recipe_paths(root, configs, touched.as_deref())
        .into_iter()
        .filter(|p| p.is_file() && !listed.contains(p.as_path()))
        .collect();
    parsed.parse(&extra, reuse_of(opts));
    t.elapsed()
}

/// The configs whose planned rows the report shows: the impacted ones, then those the entries
/// name. Outside git, or with `--all`, no change scopes the run: the whole tree is judged, so
/// every config's planned rows are shown (docs/matrix.md, "Binding").
pub(crate) fn load_shown(
    opts: &Options,
    change: &ChangeInfo,
    configs: &infx_config::LoadedConfigs,
    impact: &Impact,
    changelog: &steps::ChangelogInputs,
) -> Vec<String> {
    let mut shown: Vec<String> = impact.keys.iter().map(|k| k.key.clone()).collect();
    for k in &changelog.scope.keys {
        if !shown.contains(k) {
            shown.push(k.clone());
        }
    }
    if change.mode == steps::ChangeMode::NoRepo || opts.all {
        for e in &configs.entries {
            if !shown.contains(&e.key) {
                shown.push(e.key.clone());
            }
        }
    }
    shown
}

/// The sweep plan of the appended entries, over sound configs. The base's generation inputs
/// are read only for an `append-only` entry (its plan compares).
pub(crate) fn load_plan(
    change: &ChangeInfo,
    configs: &mut infx_config::LoadedConfigs,
    changelog: &steps::ChangelogInputs,
    modifiers: infx_changelog::Modifiers,
) -> Result<infx_changelog::PlannedRows, infx_changelog::PlanError> {
    let base = changelog
        .scope
        .appended
        .iter()
        .any(|(e, _, _)| e.append_only)
        .then(|| change.base_inputs(configs))
        .flatten();
    contribution::plan_appended(configs, base, &changelog.scope, modifiers)
}

/// What the image check reads besides the documents: the tree's pin policy, with the faults of
/// stating it (the base's image sites are read on first use, [`Inputs::base_image_sites`]).
/// From the policy file's parse when the run parsed it (a file that did not parse is the YAML
/// step's finding, and the stricter policy applies), else read here.
pub(crate) fn load_images(
    root: &Path,
    docs: &[Document],
    failures: &[(PathBuf, Diagnostic)],
) -> (infx_image::PinPolicy, Vec<Diagnostic>) {
    let file = root.join(infx_image::POLICY_FILE);
    let shown = Path::new(infx_image::POLICY_FILE);
    if let Some(doc) = docs.iter().find(|d| d.path == file) {
        return infx_image::PinPolicy::of_document(doc, shown);
    }
    if failures.iter().any(|(p, _)| *p == file) {
        return (infx_image::PinPolicy::Required, Vec::new());
    }
    infx_image::PinPolicy::of_tree(root)
}

/// A head file [`base_sites_of_tag_only`] looks at: a parsed document, or an added recipe
/// checked as it was parsed (its sites kept, its tree not).
#[derive(Clone, Copy)]
enum Sited<'a> {
    Parsed(&'a Document),
    Checked(&'a CheckedRecipe),
}

/// The base revision's image sites of every changed file that, at head, references an image
/// by tag only; read from the change's loaded texts or git, parsed here (load, not check).
fn base_sites_of_tag_only<'a>(
    root: &Path,
    change: &ChangeInfo,
    docs: impl Iterator<Item = Sited<'a>>,
    ahead: &[(String, Document)],
) -> Vec<infx_image::ImageSite> {
    if change.mode != steps::ChangeMode::Change {
        return Vec::new();
    }
    let changed: HashSet<PathBuf> = change.paths_under(root).into_iter().collect();
    let mut out = Vec::new();
    for sited in docs {
        let (path, head_text) = match sited {
            Sited::Parsed(doc) => (&doc.path, &doc.text),
            Sited::Checked(r) => (&r.path, &r.text),
        };
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        if !changed.contains(rel) {
            continue;
        }
        let sites = match sited {
            Sited::Parsed(doc) => infx_image::sites_in(doc).0,
            Sited::Checked(r) => r.sites.clone(),
        };
        if !sites.iter().any(infx_image::ImageSite::is_tag_only) {
            continue;
        }
        let Some(bytes) = change.base_bytes(path) else {
            continue;
        };
        // The base has these very bytes (a moved file, found through the layout's second
        // name): its sites are the head's, no parse needed (a tree-wide move has thousands;
        // docs/performance.md, "Renames").
        if bytes == head_text.as_bytes() {
            out.extend(sites);
            continue;
        }
        // The base's parse the load made ahead (`baseline::parse_ahead`) of these very bytes:
        // a clean parse there is the tree the sections below would give.
        if let Some((_, base)) = ahead
            .iter()
            .find(|(r, _)| Path::new(r) == rel)
            .filter(|(_, base)| base.text.as_bytes() == bytes.as_slice())
        {
            out.extend(infx_image::sites_in(base).0);
            continue;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        // The head's parse gives the base its unchanged sections (docs/performance.md,
        // "Sections of a changed file"): only the edited entries are parsed.
        let opts = infx_yaml::LoadOptions::default();
        let reparsed = match sited {
            Sited::Parsed(doc) => infx_yaml::reparse_sections(path, &text, doc, &opts).map(Ok),
            Sited::Checked(_) => None,
        };
        if let Ok(node) = reparsed.unwrap_or_else(|| infx_yaml::parse_str(path, &text)) {
            let base = Document {
                path: path.clone(),
                text: Arc::from(text),
                root: node.into(),
            };
            out.extend(infx_image::sites_in(&base).0);
        }
    }
    out
}

/// Which change a [`ReviewLoad`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewChange {
    /// The change validate finds (`--base`, else the merge-base; a clean clone's stand-in).
    AsValidate,
    /// The last commit that changed the tree's changelog, whatever the working tree holds
    /// (`review signoff` without `--base`, docs/review.md).
    LastChangelogCommit,
}

/// What `review check` and `review signoff` read: `pipeline::load`'s loading (one change load,
/// one parse per file, the same config load, changelog reading and review inputs) over the
/// files review reads, without the config rules, the change's impact and the sweep plan, which
/// only validate's other checks read (docs/architecture.md, "Parse once").
pub struct ReviewLoad {
    /// The tree, canonical.
    pub root: PathBuf,
    pub change: ChangeInfo,
    /// The YAML step's findings over the files parsed (parse errors, walk problems).
    pub yaml_findings: Vec<Diagnostic>,
    /// Parsed YAML that is neither a master config, runners.yaml, a recipe nor a lane block.
    pub docs: Vec<Document>,
    pub configs: infx_config::LoadedConfigs,
    pub changelog: steps::ChangelogInputs,
    /// The reviewer checks' inputs; the master configs stay in `configs`.
    pub review: infx_review::ReviewInputs,
    /// Findings of loading the review inputs (golden curves, CODEOWNERS).
    pub review_load_findings: Vec<Diagnostic>,
}

impl ReviewLoad {
    /// Reads everything the review commands need, as `pipeline::load` reads it with `--all`
    /// (the whole tree, whatever the change), parsing only the files review reads.
    pub fn load(opts: &Options, which: ReviewChange) -> ReviewLoad {
        let opts = Options {
            all: true,
            ..opts.clone()
        };
        let root = canonical_root(&opts);
        let detect = || match which {
            ReviewChange::AsValidate => steps::detect_change(&root, &opts),
            ReviewChange::LastChangelogCommit => steps::detect_stand_in(&root),
        };
        let DetectedAndParsed {
            change,
            parsed,
            configs,
            after_configs,
            ..
        } = detect_and_parse(&root, &opts, ParseScope::Review, detect, |_| ());
        let _nothing_ran = after_configs.join();
        let configs = own_configs(configs);
        let pr = load_pr(&opts, &change);
        let changelog = steps::load_changelog(&root, &change, &configs);
        let side = ReviewSide::load(
            &root,
            &change,
            &configs,
            changelog.scope.append_only,
            opts.checklist,
        );
        let (mut review, docs, review_load_findings) = review_inputs(&root, side, parsed.docs);
        review.change = review_change(&change, pr.number);
        ReviewLoad {
            root,
            change,
            yaml_findings: parsed.findings,
            docs,
            configs,
            changelog,
            review,
            review_load_findings,
        }
    }

    /// The YAML step's findings about the files review reads (master configs, recipes, lane
    /// blocks): a file that does not parse drops out of review, and this says why.
    pub fn reviewed_yaml_findings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.yaml_findings.iter().filter(|d| {
            d.path.as_deref().is_some_and(|p| {
                // Under benchmarks/ review parses only recipes, so anything else there, the
                // folder itself included, is the walk's finding about a folder review reads.
                let rel = super::relative_to(&self.root, p);
                rel == Path::new(layout::BENCHMARKS_DIR)
                    || matches!(
                        layout::role(&rel),
                        Role::Master | Role::Lane | Role::Recipe | Role::Launcher | Role::Benchmark
                    )
            })
        })
    }

    /// Every parsed document, for the readers that take a file again (binder, cookbooks).
    pub fn documents(&self) -> impl Iterator<Item = &Document> {
        parsed_documents(&self.docs, &self.review, &self.configs)
    }

    /// The folders review reads that a sparse checkout left out (`git/sparse-checkout`).
    pub fn sparse_findings(&self) -> Vec<Diagnostic> {
        self.change.sparse_findings(&self.root)
    }
}

/// What `review cookbook` reads: the master configs and runners.yaml parsed and loaded as
/// [`ReviewLoad`] loads them, then only the recipes of the configs it compares and the lane
/// blocks. No change is detected and no changelog is read: the comparison is of the tree as it
/// is (docs/architecture.md, "Parse once").
pub struct ConfigLoad {
    /// The tree, canonical.
    pub root: PathBuf,
    /// The YAML step's findings over the files parsed (parse errors, walk problems).
    pub yaml_findings: Vec<Diagnostic>,
    pub configs: infx_config::LoadedConfigs,
    /// The recipes of the configs asked for, and the lane blocks.
    pub recipes: Vec<Document>,
}

impl ConfigLoad {
    pub fn load(opts: &Options, keys: &[String]) -> ConfigLoad {
        let root = canonical_root(opts);
        let mut parsed = Parsed::default();
        let ConfigParse { configs, files, .. } =
            parse_configs(&root, &existing_config_files(&root), None);
        for (f, parse) in files {
            parsed.add_parse(&f, parse);
        }
        // The recipe set depends on the configs, so it is a second parse over other files.
        let mut files: Vec<PathBuf> = steps::recipe_paths(&root, &configs, Some(keys))
            .into_iter()
            .filter(|p| p.is_file())
            .collect();
        files.extend(yaml_files(
            &root.join(layout::LANES_DIR),
            &mut parsed.findings,
        ));
        parsed.parse(&files, None);
        ConfigLoad {
            root,
            yaml_findings: parsed.findings,
            configs,
            recipes: parsed.docs,
        }
    }

    /// Every parsed document: the recipes and lane blocks, the master configs, runners.yaml.
    pub fn documents(&self) -> impl Iterator<Item = &Document> {
        self.recipes
            .iter()
            .chain(&self.configs.masters)
            .chain(self.configs.runners.as_ref())
    }
}

/// Every parsed document of a load, wherever it was moved to: the other YAML, the recipes and
/// lane blocks, the master configs, runners.yaml.
fn parsed_documents<'a>(
    docs: &'a [Document],
    review: &'a infx_review::ReviewInputs,
    configs: &'a infx_config::LoadedConfigs,
) -> impl Iterator<Item = &'a Document> {
    docs.iter()
        .chain(&review.recipes)
        .chain(&review.lanes)
        .chain(&configs.masters)
        .chain(configs.runners.as_ref())
}

/// The tree of a run, canonical (as given when that fails: its reads report why).
pub(crate) fn canonical_root(opts: &Options) -> PathBuf {
    opts.root
        .canonicalize()
        .unwrap_or_else(|_| opts.root.clone())
}

pub(crate) fn load_pr(opts: &Options, change: &ChangeInfo) -> PrInputs {
    let t = Instant::now();
    let mut event_findings = Vec::new();
    let event = match opts.event.as_deref().map(pr::read_event) {
        Some(Ok(e)) => e,
        Some(Err(d)) => {
            event_findings.push(d);
            None
        }
        None => None,
    };
    let number = opts.pr.or(event.as_ref().and_then(|e| e.number));
    let context = match (&opts.labels, &event) {
        (Some(labels), _) => Some(PrContext {
            labels: labels.clone(),
            ..Default::default()
        }),
        (None, Some(e)) => Some(PrContext {
            labels: e.labels.clone(),
            ci_event: true,
            ..Default::default()
        }),
        (None, None) => None,
    }
    .map(|mut p| {
        // Upstream reads the PR head's message (the checkout is GitHub's merge commit).
        p.skip_sweep = event
            .as_ref()
            .and_then(|e| e.head_sha.as_deref())
            .and_then(|sha| change.commit_message(sha))
            .is_some_and(|m| m.contains(infx_changelog::SKIP_SWEEP));
        p
    });
    PrInputs {
        number,
        context,
        event_findings,
        elapsed: t.elapsed(),
    }
}

/// The master configs and runners.yaml, parsed, and the configs loaded from them: each
/// document moves into the configs; the rest of each file's parse (its findings, a failed
/// file's text) stays for the YAML step, which counts the file as parsed. A tree missing any
/// of them is loaded by the config crate itself, which reports what is missing. `C` holds the
/// configs: shared (an `Arc`) when the parsing thread hands them over and goes on with them.
struct ConfigParse<C = infx_config::LoadedConfigs> {
    configs: C,
    files: Vec<(PathBuf, FileParse)>,
    parse_elapsed: Duration,
    load_elapsed: Duration,
}

impl ConfigParse {
    /// The same, with the configs shared.
    fn shared(self) -> ConfigParse<Arc<infx_config::LoadedConfigs>> {
        ConfigParse {
            configs: Arc::new(self.configs),
            files: self.files,
            parse_elapsed: self.parse_elapsed,
            load_elapsed: self.load_elapsed,
        }
    }
}

/// One file's parse, as the YAML step takes it.
enum FileParse {
    /// A config file whose document is in the configs: its findings (duplicate keys) stay
    /// with the YAML step.
    InConfigs(Vec<Diagnostic>),
    /// Any other file, or a config file that did not parse.
    Parsed(Loaded),
}

/// [`ConfigParse`] of `paths`, the tree's [`existing_config_files`].
fn parse_configs(root: &Path, paths: &[PathBuf], reuse: Option<&Reuse>) -> ConfigParse {
    let t = Instant::now();
    let mut parses = parse_all(paths, reuse);
    let parse_elapsed = t.elapsed();
    let t = Instant::now();
    let mut taken = vec![false; paths.len()];
    let mut take = |rel: &str| {
        let at = paths.iter().position(|p| *p == root.join(rel))?;
        let doc = parses.get_mut(at)?.document.take()?;
        taken[at] = true;
        Some(doc)
    };
    let masters: Vec<Document> = layout::MASTER_CONFIGS
        .iter()
        .filter_map(|r| take(r))
        .collect();
    let runners = take(layout::RUNNERS);
    let configs = if paths.len() < layout::MASTER_CONFIGS.len() + 1 {
        // A config file is missing: the loader reports which (what was parsed here is
        // dropped; `load_tree` reads what exists again).
        infx_config::load_tree(root)
    } else {
        infx_config::from_documents(masters, runners, root.to_path_buf())
    };
    let files = paths
        .iter()
        .cloned()
        .zip(parses.into_iter().zip(taken))
        .map(|(path, (parse, taken))| {
            let parse = if taken {
                FileParse::InConfigs(parse.findings)
            } else {
                FileParse::Parsed(parse)
            };
            (path, parse)
        })
        .collect();
    ConfigParse {
        configs,
        files,
        parse_elapsed,
        load_elapsed: t.elapsed(),
    }
}

/// The review's view of the change ([`infx_review::ReviewInputs::change`]): made last, as it
/// holds the change's texts (which [`check_added_recipes`] may still share with the parse's).
pub(crate) fn review_change(change: &ChangeInfo, pr: Option<u64>) -> Option<infx_review::Change> {
    match &change.loaded {
        Some(Ok(c)) => Some(infx_review::Change::from_diff(c, pr)),
        _ => None,
    }
}

/// The review inputs that need neither the parsed documents nor the config rules' verdict, so
/// they load beside the config check: CODEOWNERS, waivers, the base's master keys and Check
/// 12's verdict (the change comes last, [`review_change`]).
pub(crate) struct ReviewSide {
    inputs: infx_review::ReviewInputs,
    findings: Vec<Diagnostic>,
}

impl ReviewSide {
    pub(crate) fn load(
        root: &Path,
        change: &ChangeInfo,
        configs: &infx_config::LoadedConfigs,
        append_only: bool,
        checklist: super::Checklist,
    ) -> ReviewSide {
        let mut findings = Vec::new();
        let mut inputs = infx_review::ReviewInputs {
            codeowners: infx_review::load_codeowners(root, &mut findings),
            waivers: infx_review::load_waivers(root),
            ..Default::default()
        };
        if change.base.is_some() {
            // Only the base's top-level keys are needed (which configs are new): read them
            // from the text, no parse.
            let texts: Vec<String> = configs
                .masters
                .iter()
                .filter_map(|m| String::from_utf8(change.base_bytes(&m.path)?).ok())
                .collect();
            inputs.base_master_keys = Some(steps::master_keys_of(texts.iter().map(String::as_str)));
        }
        inputs.append_only_entry = append_only;
        inputs.aug_checklist = checklist.is_aug(configs.dialect);
        if append_only && let (Some(repo_root), Some(base)) = (&change.repo_root, &change.base) {
            // Check 12 compares the matrices of base and head through the changelog planner
            // (committed history: HEAD, or the fallback commit).
            inputs.append_only_verdict = crate::history::append_only_verdict(repo_root, base);
        }
        ReviewSide { inputs, findings }
    }
}

/// The reviewer checks' inputs: `side` with the recipes, lane blocks and golden curves from
/// the parsed documents; the other documents are handed back, then the findings of loading
/// the inputs (golden curves first, then CODEOWNERS: the report's order).
pub(crate) fn review_inputs(
    root: &Path,
    side: ReviewSide,
    docs: Vec<Document>,
) -> (infx_review::ReviewInputs, Vec<Document>, Vec<Diagnostic>) {
    let mut findings = Vec::new();
    // The master configs stay in `configs` (the review check passes them); a copy of the two
    // largest documents would cost more than some whole checks.
    let mut inputs = side.inputs;
    let mut rest = Vec::new();
    for d in docs {
        match layout::role(&super::relative_to(root, &d.path)) {
            Role::Recipe => inputs.recipes.push(d),
            Role::Lane => inputs.lanes.push(d),
            _ => rest.push(d),
        }
    }
    inputs.golden = infx_review::load_golden_in(root, &DocIndex::new(&rest), &mut findings);
    findings.extend(side.findings);
    (inputs, rest, findings)
}

/// What [`detect_and_parse`] hands back; `R` is what its caller ran on the configs (given
/// their `Arc`, so that it can let go of them before it ends).
pub(crate) struct DetectedAndParsed<R> {
    pub change: ChangeInfo,
    pub change_elapsed: Duration,
    /// The YAML files in scope, in walk order.
    pub files: Vec<PathBuf>,
    /// Their parses; the master configs' and runners.yaml's documents are in `configs`.
    pub parsed: Parsed,
    pub yaml_elapsed: Duration,
    /// Shared with the thread that may still run `after_configs` on them; the caller owns
    /// them alone once [`AfterConfigs::join`] returned ([`own_configs`]).
    pub configs: Arc<infx_config::LoadedConfigs>,
    pub config_load_elapsed: Duration,
    /// What the caller runs on the configs as soon as they are loaded ([`ParseScope::Run`]).
    pub after_configs: AfterConfigs<R>,
    /// The recipe files the change adds that no config references, not parsed yet: the
    /// caller checks them as they are parsed ([`check_added_recipes`]) once the review inputs
    /// are loaded. In `files`' order; empty unless the change adds
    /// [`Options::check_added_recipes_from`] recipe files or more.
    pub deferred: Vec<PathBuf>,
}

/// `after_configs` of [`detect_and_parse`]: still running beside the caller, or done.
pub(crate) enum AfterConfigs<R> {
    Running(std::thread::JoinHandle<Option<R>>),
    Done(Option<R>),
}

impl<R> AfterConfigs<R> {
    /// Its result; `None` when it was not run or panicked (a bug: the caller runs it again).
    pub(crate) fn join(self) -> Option<R> {
        match self {
            AfterConfigs::Running(handle) => handle.join().ok().flatten(),
            AfterConfigs::Done(done) => done,
        }
    }
}

/// The configs of [`DetectedAndParsed`] for the caller alone, after [`AfterConfigs::join`]
/// (a copy only if something still held them, which nothing does then).
pub(crate) fn own_configs(configs: Arc<infx_config::LoadedConfigs>) -> infx_config::LoadedConfigs {
    Arc::try_unwrap(configs).unwrap_or_else(|shared| (*shared).clone())
}

/// Detects the change (`detect`, on this thread) while another thread parses the master
/// configs and runners.yaml, loads the configs from them, hands them over and, for a run, goes
/// on to run `after_configs` on them (the pipeline's config rules) while this thread works on
/// with them: in every scope those are the largest files, and change detection is mostly
/// waiting on the file system and libgit2 (docs/performance.md). Then the rest of the scope is
/// parsed here.
pub(crate) fn detect_and_parse<R: Send + 'static>(
    root: &Path,
    opts: &Options,
    parse_scope: ParseScope,
    detect: impl FnOnce() -> ChangeInfo,
    after_configs: impl FnOnce(Arc<infx_config::LoadedConfigs>) -> R + Send + 'static,
) -> DetectedAndParsed<R> {
    let always = existing_config_files(root);
    let run_after = parse_scope == ParseScope::Run;
    let (handed, handed_over) =
        std::sync::mpsc::sync_channel::<ConfigParse<Arc<infx_config::LoadedConfigs>>>(1);
    let early = {
        let (root, always) = (root.to_path_buf(), always.clone());
        let reuse = opts.scope.as_ref().and_then(|s| s.reuse.clone());
        move || {
            let parse = parse_configs(&root, &always, reuse.as_deref()).shared();
            // Nothing runs after: the caller holds the configs alone.
            let kept = run_after.then(|| Arc::clone(&parse.configs));
            let _ = handed.send(parse);
            kept.map(after_configs)
        }
    };
    // Without a repository there is no change to detect beside the parse (the base's
    // export, docs/baseline.md): the configs are parsed here, and no thread pays for a
    // fresh heap for nothing (docs/performance.md, "Threads cost pages").
    let early = if opts.no_repository {
        AfterConfigs::Done(
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(early))
                .ok()
                .flatten(),
        )
    } else {
        AfterConfigs::Running(std::thread::spawn(early))
    };
    let t = Instant::now();
    let change = detect();
    let change_elapsed = t.elapsed();

    let t = Instant::now();
    let whole_tree = opts.whole_tree(&change.mode);
    let mut walk_findings = Vec::new();
    let files: Vec<PathBuf> = if parse_scope == ParseScope::Review {
        review_yaml_files(root, &mut walk_findings)
    } else if let (Some(scope), false) = (&opts.scope, opts.all) {
        scope
            .files
            .iter()
            .map(|f| root.join(f))
            .filter(|p| p.is_file())
            .collect()
    } else if whole_tree {
        let changelog = root.join(layout::CHANGELOG);
        yaml_files(root, &mut walk_findings)
            .into_iter()
            .filter(|p| *p != changelog)
            .collect()
    } else {
        scoped_yaml_files(root, &change, &mut walk_findings)
    };
    let early_set: HashSet<&Path> = always.iter().map(PathBuf::as_path).collect();
    let rest: Vec<PathBuf> = files
        .iter()
        .filter(|f| !early_set.contains(f.as_path()))
        .cloned()
        .collect();
    // The recipe files a change adds, when it adds enough to weigh: those no config
    // references are checked as they are parsed, later (`check_added_recipes`), so that their
    // trees never pile up; which those are, the configs tell.
    let (mut rest, added_recipes) = match run_after {
        true => split_added_recipes(root, &change, rest, opts.check_added_recipes_from),
        false => (rest, Vec::new()),
    };
    let mut rest_loaded = parse_all(&rest, reuse_of(opts));
    let waiting = Instant::now();
    let (config_parse, after_configs) = match handed_over.recv() {
        Ok(parsed) => (parsed, early),
        // A panicking parser thread is a bug: every config file reports it, and the
        // configs load again here.
        Err(_) => (
            ConfigParse {
                configs: Arc::new(infx_config::load_tree(root)),
                files: always
                    .iter()
                    .cloned()
                    .zip(failed_parses(&always).into_iter().map(FileParse::Parsed))
                    .collect(),
                parse_elapsed: Duration::ZERO,
                load_elapsed: Duration::ZERO,
            },
            AfterConfigs::Done(None),
        ),
    };
    let waited = waiting.elapsed();
    let ConfigParse {
        configs,
        files: config_files,
        parse_elapsed: early_elapsed,
        load_elapsed: config_load_elapsed,
    } = config_parse;
    let (referenced, deferred) = referenced_recipes(root, &configs, added_recipes);
    rest_loaded.extend(parse_all(&referenced, reuse_of(opts)));
    rest.extend(referenced);
    // Back into the scope's order: the report lists files in walk order.
    let mut by_path: std::collections::HashMap<PathBuf, FileParse> = config_files
        .into_iter()
        .chain(
            rest.into_iter()
                .zip(rest_loaded.into_iter().map(FileParse::Parsed)),
        )
        .collect();
    let mut parsed = Parsed::default();
    for f in &files {
        if let Some(parse) = by_path.remove(f.as_path()) {
            parsed.add_parse(f, parse);
        }
    }
    parsed.findings.extend(walk_findings);
    // The step's own work: the walk and the rest's parse here, the early parse there (not
    // the wait for it, which overlaps the parse already counted; the configs' load is
    // the config step's).
    let yaml_elapsed = t.elapsed().saturating_sub(waited) + early_elapsed;
    DetectedAndParsed {
        change,
        change_elapsed,
        files,
        parsed,
        yaml_elapsed,
        configs,
        config_load_elapsed,
        after_configs,
        deferred,
    }
}

/// `rest` without the recipe files the change adds, and those, when there are at least
/// `from` of them (in `rest`'s order); else `rest` whole.
fn split_added_recipes(
    root: &Path,
    change: &ChangeInfo,
    rest: Vec<PathBuf>,
    from: usize,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let added: HashSet<PathBuf> = change.added_files().into_iter().collect();
    if added.len() < from {
        return (rest, Vec::new());
    }
    let (recipes, rest): (Vec<PathBuf>, Vec<PathBuf>) = rest.into_iter().partition(|f| {
        added.contains(f) && layout::role(&super::relative_to(root, f)) == Role::Recipe
    });
    if recipes.len() < from {
        let mut all = rest;
        all.extend(recipes);
        return (all, Vec::new());
    }
    (rest, recipes)
}

/// Of `files` (recipe files), those a config references, as a review binding
/// (`infx_review::bound_recipes`) or as a recipe it runs (srt-recipe, `CONFIG_FILE=`), and the
/// others. A reader that looks a recipe up by path reads one that is not parsed from disk, so
/// only the review's binding decides what the checks find.
fn referenced_recipes(
    root: &Path,
    configs: &infx_config::LoadedConfigs,
    files: Vec<PathBuf>,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    if files.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let bound = infx_review::bound_recipes(&configs.masters);
    let used: HashSet<PathBuf> = steps::recipe_uses(configs, None)
        .into_iter()
        .map(|u| root.join(u.rel))
        .collect();
    files
        .into_iter()
        .partition(|f| used.contains(f) || bound.contains(&infx_review::recipe_key(f)))
}

/// An added recipe file no config references, checked as soon as it was parsed: what the
/// image and review checks found in it (their findings on it, as if its document were among
/// theirs). Its tree was dropped then: a change that adds thousands of recipes held every
/// tree to the end of the run (docs/performance.md, "Memory per added file").
pub(crate) struct CheckedRecipe {
    pub(crate) path: PathBuf,
    /// The parse's text, also among the raw sources (and the change's, when the same bytes).
    pub(crate) text: Arc<str>,
    pub(crate) sites: Vec<infx_image::ImageSite>,
    pub(crate) image_findings: Vec<Diagnostic>,
    pub(crate) review_findings: Vec<Diagnostic>,
}

/// Parses `files` (the [`DetectedAndParsed::deferred`] recipes) on every core and checks each
/// as it is parsed ([`CheckedRecipe`]); the parse findings, failures and texts go to
/// `parsed`. The change's copy of each text is freed for the parse's at once (see
/// [`ChangeInfo::share_texts`]).
pub(crate) fn check_added_recipes(
    files: &[PathBuf],
    review: &infx_review::ReviewInputs,
    change: &mut ChangeInfo,
    parsed: &mut Parsed,
) -> Vec<CheckedRecipe> {
    if files.is_empty() {
        return Vec::new();
    }
    let mut texts = change.texts_of(files);
    let jobs: Vec<(&PathBuf, std::sync::Mutex<Option<&mut infx_diff::FileText>>)> = files
        .iter()
        .map(|f| (f, std::sync::Mutex::new(texts.remove(f))))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let check = |(file, text): &(&PathBuf, std::sync::Mutex<Option<&mut infx_diff::FileText>>)| {
        // A panicking parse or check is a bug: that file reports it, the others are checked.
        let work = std::panic::AssertUnwindSafe(|| {
            // No parse is on offer: a run with a change has none (`reuse_of`).
            let mut loaded = load_file_reusing(file, None);
            let checked = loaded.document.take().map(|doc| {
                if let Ok(mut text) = text.lock()
                    && let Some(text) = text.as_deref_mut()
                {
                    steps::share_text(text, &doc.text);
                }
                let (sites, image_findings) = infx_image::sites_in(&doc);
                CheckedRecipe {
                    path: doc.path.clone(),
                    text: Arc::clone(&doc.text),
                    sites,
                    image_findings,
                    review_findings: infx_review::review_unbound_recipe(&doc, review),
                }
            });
            (loaded, checked)
        });
        std::panic::catch_unwind(work).unwrap_or_else(|_| {
            let failed = failed_parses(std::slice::from_ref(*file)).remove(0);
            (failed, None)
        })
    };
    let done = infx_report::parallel_map(&jobs, threads, check, &|_| {});
    let mut checked = Vec::with_capacity(files.len());
    for (file, (loaded, c)) in files.iter().zip(done) {
        match c {
            Some(c) => {
                parsed.files += 1;
                parsed.findings.extend(loaded.findings);
                parsed.raw.push((file.clone(), Arc::clone(&c.text)));
                checked.push(c);
            }
            None => parsed.add(file, loaded),
        }
    }
    checked
}

/// Which YAML files a load parses.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParseScope {
    /// The run's: the whole tree, or the change's scope ([`scoped_yaml_files`]).
    Run,
    /// What the review commands read as documents: the master configs, runners.yaml, the
    /// recipes and lane blocks (golden curves and cookbook files are read when looked up).
    Review,
}

/// The YAML files of [`ParseScope::Review`].
fn review_yaml_files(root: &Path, diags: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    let mut files = existing_config_files(root);
    let recipes = yaml_files(&root.join(layout::BENCHMARKS_DIR), diags)
        .into_iter()
        .filter(|p| layout::role(&super::relative_to(root, p)) == Role::Recipe);
    files.extend(recipes);
    files.extend(yaml_files(&root.join(layout::LANES_DIR), diags));
    files
}

/// The result of a parser thread that panicked (a bug): one internal finding per file.
fn failed_parses(files: &[PathBuf]) -> Vec<Loaded> {
    files
        .iter()
        .map(|f| Loaded {
            document: None,
            findings: vec![
                Diagnostic::error(
                    infx_yaml::codes::INTERNAL,
                    "the YAML loader failed on this file",
                )
                .with_path(f),
            ],
            text: None,
        })
        .collect()
}

/// Parsed documents, parse findings and the raw text of files that failed, accumulated.
#[derive(Default)]
pub(crate) struct Parsed {
    pub(crate) docs: Vec<Document>,
    pub(crate) findings: Vec<Diagnostic>,
    pub(crate) raw: Vec<(PathBuf, Arc<str>)>,
    /// The files that failed to read or parse, with the error that stopped each.
    pub(crate) failures: Vec<(PathBuf, Diagnostic)>,
    pub(crate) files: usize,
}

impl Parsed {
    fn parse(&mut self, files: &[PathBuf], reuse: Option<&Reuse>) {
        self.docs.reserve(files.len());
        for (f, loaded) in files.iter().zip(parse_all(files, reuse)) {
            self.add(f, loaded);
        }
    }

    /// A file's parse, a config file's document already in the configs.
    fn add_parse(&mut self, file: &Path, parse: FileParse) {
        match parse {
            FileParse::InConfigs(findings) => {
                self.files += 1;
                self.findings.extend(findings);
            }
            FileParse::Parsed(loaded) => self.add(file, loaded),
        }
    }

    /// A file's parse: its findings, and its document as PyYAML reads it (a file with a
    /// duplicate key too: its errors are reported and its last-wins document still checked).
    fn add(&mut self, file: &Path, loaded: Loaded) {
        self.files += 1;
        if loaded.document.is_none()
            && let Some(stop) = loaded.findings.last()
        {
            self.failures.push((file.to_path_buf(), stop.clone()));
        }
        self.findings.extend(loaded.findings);
        match loaded.document {
            Some(doc) => self.docs.push(doc),
            // The text the loader read: the positions count in it (a byte order mark already
            // removed), and the file is not read a second time (docs/architecture.md, Load).
            None => {
                if let Some(text) = loaded.text {
                    self.raw.push((file.to_path_buf(), text));
                }
            }
        }
    }
}

/// The YAML a change-scoped run parses: the master configs, runners.yaml, the lane blocks, and
/// every changed YAML file that still exists.
fn scoped_yaml_files(
    root: &Path,
    change: &ChangeInfo,
    diags: &mut Vec<Diagnostic>,
) -> Vec<PathBuf> {
    let mut files = existing_config_files(root);
    files.extend(yaml_files(&root.join(layout::LANES_DIR), diags));
    // A set, not `files.contains`: a tree-wide change lists tens of thousands of paths.
    let mut listed: HashSet<PathBuf> = files.iter().cloned().collect();
    for rel in change.paths_under(root) {
        let p = root.join(&rel);
        let is_yaml = matches!(
            rel.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        );
        if is_yaml && layout::role(&rel) != Role::Changelog && !listed.contains(&p) && p.is_file() {
            listed.insert(p.clone());
            files.push(p);
        }
    }
    files
}

/// The parses a base revision's run takes over from the head's (docs/baseline.md, "Cost").
fn reuse_of(opts: &Options) -> Option<&Reuse> {
    opts.scope.as_ref().and_then(|s| s.reuse.as_deref())
}

/// Parses files on every core (they are independent); results in input order. A parse `reuse`
/// offers is taken instead.
fn parse_all(files: &[PathBuf], reuse: Option<&Reuse>) -> Vec<Loaded> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    // Parsing time follows bytes, not file count: one master config outweighs hundreds of
    // recipes. A file whose size cannot be read counts as empty; its load reports why.
    let sizes: Vec<u64> = files
        .iter()
        .map(|f| match reuse {
            Some(r) if r.has(f) => 0,
            _ => infx_fs::size_for_read(f),
        })
        .collect();
    // A thread pays for itself from about this many bytes (a few milliseconds of parsing).
    const WORTH_A_THREAD: u64 = 64 * 1024;
    let threads = threads.min((sizes.iter().sum::<u64>() / WORTH_A_THREAD).max(1) as usize);
    if threads < 2 {
        return files.iter().map(|f| load_file_reusing(f, reuse)).collect();
    }
    // A file this large is cut into pieces of whole top-level sections that parse on every
    // core (a master config is a third of a one-config change's parse; docs/performance.md,
    // "One file on two cores"), unless another run's parse of it is on offer.
    const CUT_FROM: u64 = 2 * WORTH_A_THREAD;
    let mut cuts: Vec<(usize, infx_yaml::Cut)> = Vec::new();
    let mut jobs: Vec<Job> = Vec::with_capacity(files.len());
    let mut small = Vec::with_capacity(files.len());
    for (i, (f, &size)) in files.iter().zip(&sizes).enumerate() {
        if size < CUT_FROM || reuse.is_some_and(|r| r.has_any(f)) {
            small.push(Job::File(i));
            continue;
        }
        let pieces = (threads * 2).min((size / WORTH_A_THREAD) as usize);
        match infx_yaml::cut_file(f, pieces) {
            Ok(cut) => {
                jobs.extend((0..cut.pieces()).map(|p| Job::Piece(cuts.len(), p)));
                cuts.push((i, cut));
            }
            Err(uncut) => jobs.push(Job::Uncut(i, std::sync::Mutex::new(Some(Box::new(uncut))))),
        }
    }
    // The large files' work first: the small files fill in behind it.
    jobs.extend(small);
    // Files one at a time from a shared index, the calling thread one of the workers: every
    // thread costs a fresh allocator heap, whose first page the kernel zeroes (a 2 MiB huge
    // page under mimalloc's arena; docs/performance.md, "Threads cost pages").
    let run = |job: &Job| {
        // A panicking parse is a bug: that file reports it, the others are still parsed.
        let work = std::panic::AssertUnwindSafe(|| match job {
            Job::File(i) => Done::Loaded(files.get(*i).map(|f| load_file_reusing(f, reuse))),
            Job::Uncut(_, uncut) => Done::Loaded(
                uncut
                    .lock()
                    .ok()
                    .and_then(|mut u| u.take())
                    .map(|u| u.load()),
            ),
            Job::Piece(c, p) => Done::Piece(cuts.get(*c).and_then(|(_, cut)| cut.parse(*p))),
        });
        std::panic::catch_unwind(work).unwrap_or(Done::Loaded(None))
    };
    let done = infx_report::parallel_map(&jobs, threads, run, &|_| {});
    let mut loaded: Vec<Option<Loaded>> = (0..files.len()).map(|_| None).collect();
    let mut pieces: Vec<Vec<Option<infx_yaml::PieceParse>>> =
        cuts.iter().map(|_| Vec::new()).collect();
    for (job, result) in jobs.iter().zip(done) {
        match (job, result) {
            (Job::File(i) | Job::Uncut(i, _), Done::Loaded(l)) => {
                if let Some(slot) = loaded.get_mut(*i) {
                    *slot = l;
                }
            }
            (Job::Piece(c, _), Done::Piece(p)) => {
                if let Some(parts) = pieces.get_mut(*c) {
                    parts.push(p);
                }
            }
            _ => {}
        }
    }
    for ((i, cut), parts) in cuts.into_iter().zip(pieces) {
        let join = std::panic::AssertUnwindSafe(|| cut.join(parts));
        if let (Some(slot), Ok(l)) = (loaded.get_mut(i), std::panic::catch_unwind(join)) {
            *slot = Some(l);
        }
    }
    files
        .iter()
        .zip(loaded)
        .map(|(f, l)| l.unwrap_or_else(|| failed_parses(std::slice::from_ref(f)).remove(0)))
        .collect()
}

/// One piece of [`parse_all`]'s work.
enum Job {
    /// Parse the file of this index (or take the parse on offer).
    File(usize),
    /// Parse the file of this index whole, as read.
    Uncut(usize, std::sync::Mutex<Option<Box<infx_yaml::Uncut>>>),
    /// Parse this piece of the cut file of this index.
    Piece(usize, usize),
}

/// What a [`Job`] made.
enum Done {
    Loaded(Option<Loaded>),
    Piece(Option<infx_yaml::PieceParse>),
}

/// Every YAML file under `dir`; a folder that cannot be listed, a symlink out of the
/// repository or into its own ancestry, a FIFO: each is an error finding naming that path (its
/// files would otherwise silently drop out of the check; docs/security.md).
fn yaml_files(dir: &Path, diags: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    let walk = infx_yaml::walk_yaml(dir);
    diags.extend(walk.problems.iter().map(infx_fs::FsError::to_diagnostic));
    walk.files
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A master config's shape: `n` top-level sections of a few lines each.
    fn sections(n: usize, extra: &str) -> String {
        (0..n)
            .map(|i| {
                format!("cfg-{i}:\n  image: img:{i}\n  rows:\n  - {{tp: {i}, ep: 1}}{extra}\n")
            })
            .collect()
    }

    #[test]
    fn changed_texts_share_the_parsed_documents_bytes() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = infx_fs::canonical(dir.path()).expect("a canonical folder");
        let git = |args: &[&str]| crate::test_git::git(&root, args);
        git(&["init", "-q", "-b", "main"]);
        std::fs::write(root.join("kept.yaml"), "a: 1\n").expect("written");
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "base"]);
        std::fs::write(root.join("kept.yaml"), "a: 2\n").expect("written");
        std::fs::write(root.join("new.yaml"), "b: [1, 2]\n").expect("written");
        // A byte order mark: the parse's text drops it, so the bytes differ and stay the change's.
        std::fs::write(root.join("bom.yaml"), "\u{feff}c: 3\n").expect("written");
        let mut change = steps::detect_change(&root, &Options::new(&root));
        let docs: Vec<Document> = ["kept.yaml", "new.yaml", "bom.yaml"]
            .iter()
            .filter_map(|f| infx_yaml::load_file_as_pyyaml(&root.join(f)).document)
            .collect();
        change.share_texts(docs.iter());
        let Some(Ok(loaded)) = &change.loaded else {
            panic!("the change is loaded");
        };
        assert_eq!(loaded.texts.len(), 3, "every changed file has its texts");
        for t in &loaded.texts {
            let doc = docs.iter().find(|d| d.path == root.join(&t.path));
            let doc = doc.expect("each changed file was parsed");
            let shared = std::ptr::eq(t.new.as_ptr(), doc.text.as_ptr());
            assert_eq!(
                shared,
                !t.path.ends_with("bom.yaml"),
                "{}",
                t.path.display()
            );
            let bytes = std::fs::read(root.join(&t.path)).expect("read back");
            assert_eq!(&t.new[..], &bytes[..], "{}", t.path.display());
        }
    }

    #[test]
    fn files_parsed_in_pieces_are_their_whole_parses() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).expect("the test file is written");
            p
        };
        let big = write("big.yaml", &sections(4000, ""));
        // Large, but an anchor and its alias: parsed whole. Large with a key twice: the pieces
        // give way to the whole parse and its finding.
        let anchored = write("anchored.yaml", &(sections(3000, "") + "x: &a 1\ny: *a\n"));
        let twice = write("twice.yaml", &(sections(3000, "") + "cfg-7:\n  image: z\n"));
        let small = write("small.yaml", "a: 1\n");
        let missing = dir.path().join("missing.yaml");
        assert!(
            infx_yaml::cut_file(&big, 4).is_ok(),
            "the large file is cut"
        );
        let files = vec![big, anchored, small, twice, missing];
        let parsed = parse_all(&files, None);
        assert_eq!(parsed.len(), files.len());
        for (f, got) in files.iter().zip(&parsed) {
            let want = infx_yaml::load_file_as_pyyaml(f);
            let tree = |l: &Loaded| l.document.as_ref().map(|d| format!("{:?}", d.root));
            assert_eq!(tree(got), tree(&want), "{}", f.display());
            assert_eq!(got.findings, want.findings, "{}", f.display());
            assert_eq!(got.text, want.text, "{}", f.display());
        }
        assert!(
            parsed[3]
                .findings
                .iter()
                .any(|d| d.code == infx_yaml::codes::DUPLICATE_KEY)
        );
    }
}
