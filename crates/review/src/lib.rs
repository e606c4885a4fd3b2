//! infx-review: the reviewer checks a machine can decide from the repository.
//!
//! Each check is a pure function of loaded inputs → [`Diagnostic`]s with its own code
//! (`review/<check>`; the list is in `docs/review.md`). The caller loads the tree into
//! [`ReviewInputs`] (the xtask: validate's load); [`review_tree`] runs every
//! repository-decidable check on them.

mod codeowners;
pub mod codes;
pub mod cookbook;
mod golden;
mod images;
mod invariants;
mod load;
mod masters;
pub mod pareto;
pub mod pareto_plot;
mod patches;
mod recipe;
pub mod signoff;
#[cfg(test)]
mod test_support;

use infx_report::Diagnostic;
use infx_yaml::Document;
use std::collections::{BTreeSet, HashMap};

pub use codeowners::{
    ChangedPath, CodeOwners, OCT_CORE_TEAM, PathOwners, Signer, check_signer, owners_of_change,
    required_owners,
};
pub use golden::{Golden, Mode as GoldenMode};
pub use load::{find_codeowners, load_codeowners, load_golden_in, load_waivers};
pub use patches::{AddedLines, FileChange, Status, Waivers};

/// Check 12 cannot run until base and head matrices are available.
pub const CODE_APPEND_ONLY: infx_report::Code = codes::APPEND_ONLY;

/// The change under review (from `infx-diff` / git): files with status and added lines.
#[derive(Clone, Debug, Default)]
pub struct Change {
    pub files: Vec<FileChange>,
    /// The PR number, when known (for waiver lookup).
    pub pr: Option<u64>,
    /// The whole new text of every added or modified `*_mtp.sh` (the MTP launcher rule reads
    /// a command that may span lines the change did not touch).
    pub mtp_launchers: Vec<(String, String)>,
}

impl Change {
    /// The review view of an `infx-diff` change: statuses, rename sources and added lines
    /// (untracked files count as added).
    pub fn from_diff(c: &infx_diff::Change, pr: Option<u64>) -> Change {
        let slash = |p: &std::path::Path| p.to_string_lossy().replace('\\', "/");
        // One lookup per changed file: a tree-wide change has tens of thousands of paths.
        let texts: HashMap<&std::path::Path, &infx_diff::FileText> =
            c.texts.iter().map(|t| (t.path.as_path(), t)).collect();
        let files = c
            .set
            .files
            .iter()
            .map(|f| {
                let path = slash(&f.path);
                let status = match f.status {
                    infx_diff::Status::Added
                    | infx_diff::Status::Untracked
                    | infx_diff::Status::Copied => Status::Added,
                    infx_diff::Status::Deleted => Status::Deleted,
                    infx_diff::Status::Renamed => Status::Renamed,
                    _ => Status::Modified,
                };
                let added_lines = texts
                    .get(f.path.as_path())
                    .map(|t| AddedLines::pick(t.new.clone(), &t.added))
                    .unwrap_or_default();
                FileChange {
                    path,
                    old_path: f.old_path.as_deref().map(slash),
                    status,
                    added_lines,
                }
            })
            .collect();
        let mtp_launchers = c
            .texts
            .iter()
            .filter(|t| t.path.to_string_lossy().ends_with("_mtp.sh") && !t.new.is_empty())
            .map(|t| (slash(&t.path), String::from_utf8_lossy(&t.new).into_owned()))
            .collect();
        Change {
            files,
            pr,
            mtp_launchers,
        }
    }

    pub fn changed_paths(&self) -> Vec<ChangedPath> {
        self.files
            .iter()
            .map(|f| ChangedPath {
                path: f.path.clone(),
                old_path: f.old_path.clone(),
            })
            .collect()
    }
}

/// Everything the repository-decidable checks read. Paths inside documents are relative to the
/// checked tree.
#[derive(Clone, Debug, Default)]
pub struct ReviewInputs {
    /// `configs/*-master.yaml`.
    pub masters: Vec<Document>,
    /// srt-slurm recipes (`benchmarks/**/srt-slurm-recipes/**/*.yaml`).
    pub recipes: Vec<Document>,
    /// Shared lane blocks (`configs/srt-recipes/*.yaml`), scanned on their own.
    pub lanes: Vec<Document>,
    pub golden: Golden,
    pub golden_mode: GoldenMode,
    pub codeowners: Option<CodeOwners>,
    /// The change, when a base revision is known.
    pub change: Option<Change>,
    /// Waiver files at head, by PR number.
    pub waivers: Waivers,
    /// The sign-off author, for Check 0.
    pub signer: Option<Signer>,
    /// Master-config entry keys at the base revision (enables the engine-first rule, Check 6b).
    pub base_master_keys: Option<BTreeSet<String>>,
    /// Whether the change adds a changelog entry with `append-only: true` (Check 12).
    pub append_only_entry: bool,
    /// Check 12's base/head matrix verdict from `infx-changelog` (`Err` = upstream's
    /// append-only message). `None` with `append_only_entry`: reported as not run.
    pub append_only_verdict: Option<Result<(), String>>,
    /// The tree is judged by the [Aug] checklist: the rules the [Oct] checklist added
    /// ([`codes::OCT_ONLY`]) do not run (docs/review.md, "Rules carry their checklist").
    pub aug_checklist: bool,
}

impl ReviewInputs {
    /// The golden-AL mode the checks apply: `Auto` is `Injected` when the tree has lane blocks
    /// (the [Oct] layout), else `Pinned`.
    pub fn effective_golden_mode(&self) -> GoldenMode {
        match self.golden_mode {
            GoldenMode::Auto if self.lanes.is_empty() => GoldenMode::Pinned,
            GoldenMode::Auto => GoldenMode::Injected,
            m => m,
        }
    }
}

/// Runs every repository-decidable check. Deterministic order: images, recipes (file order),
/// lanes, change-based checks.
pub fn review_tree(inputs: &ReviewInputs) -> Vec<Diagnostic> {
    review_tree_of(inputs, &inputs.masters)
}

/// [`review_tree`] with the master configs given apart from the inputs (`validate` holds them
/// in its config load and does not copy them into `inputs.masters`).
pub fn review_tree_of(inputs: &ReviewInputs, masters: &[Document]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let entries = masters::entries(masters);
    out.extend(images::check(&entries));
    if let Some(base) = &inputs.base_master_keys {
        out.extend(images::check_engine_first(&entries, base));
    }
    let bindings = masters::bindings(&entries);
    let mode = inputs.effective_golden_mode();
    for doc in &inputs.recipes {
        out.extend(review_recipe(
            doc,
            bindings.get(&path_key(doc)),
            &inputs.golden,
            mode,
        ));
    }
    for doc in &inputs.lanes {
        out.extend(recipe::check_recipe(doc));
    }
    if let Some(change) = &inputs.change {
        out.extend(patches::check(&change.files, change.pr, &inputs.waivers));
        out.extend(invariants::check_mtp_chat_template(change));
        out.extend(invariants::check_recipe_containers(
            &entries,
            &bindings,
            &inputs.recipes,
            change,
        ));
        if let (Some(co), Some(signer)) = (&inputs.codeowners, &inputs.signer) {
            out.extend(codeowners::check_signer(
                co,
                &change.changed_paths(),
                signer,
            ));
        }
    }
    match (&inputs.append_only_verdict, inputs.append_only_entry) {
        (Some(Err(msg)), _) => out.push(
            Diagnostic::error(CODE_APPEND_ONLY, format!("append-only change: {msg}"))
                .with_path(infx_config::layout::CHANGELOG)
                .with_help("an append-only entry may only add points to existing curves with an unchanged image; use a regular entry otherwise"),
        ),
        (None, true) => out.push(
            Diagnostic::warning(
                CODE_APPEND_ONLY,
                "not run: the change adds an `append-only: true` changelog entry, but no base/head matrix comparison (Check 12) was available",
            )
            .with_path(infx_config::layout::CHANGELOG)
            .with_help("commit the change and run `cargo xtask review check --base <rev>` (or `cargo xtask changelog plan`)"),
        ),
        _ => {}
    }
    on_checklist(inputs, &mut out);
    out
}

/// Drops the findings of rules the tree's checklist does not have ([`ReviewInputs::aug_checklist`]).
fn on_checklist(inputs: &ReviewInputs, out: &mut Vec<Diagnostic>) {
    if inputs.aug_checklist {
        out.retain(|d| !codes::OCT_ONLY.contains(&d.code));
    }
}

/// The recipes the master configs bind, by [`recipe_key`]. [`review_tree_of`] reviews any
/// other recipe with nothing but the recipe itself and the golden curves
/// ([`review_unbound_recipe`]), so a caller can review it as soon as it is parsed and keep no
/// tree (validate's large changes; docs/performance.md, "Memory per added file").
pub fn bound_recipes(masters: &[Document]) -> BTreeSet<String> {
    masters::bindings(&masters::entries(masters))
        .into_keys()
        .collect()
}

/// What [`review_tree_of`] reports on `doc`, a recipe [`bound_recipes`] does not hold, when
/// `doc` is in [`ReviewInputs::recipes`] (`inputs.recipes` itself is not read).
pub fn review_unbound_recipe(doc: &Document, inputs: &ReviewInputs) -> Vec<Diagnostic> {
    let mut out = review_recipe(doc, None, &inputs.golden, inputs.effective_golden_mode());
    on_checklist(inputs, &mut out);
    out
}

/// The tree-relative recipe path (`benchmarks/…`) of a document, whatever prefix its path has
/// (absolute, repository-relative or tree-relative), so master-config references match.
pub(crate) fn path_key(doc: &Document) -> String {
    recipe_key(&doc.path)
}

/// [`path_key`] of a recipe at `path`: the key [`bound_recipes`] holds it by.
pub fn recipe_key(path: &std::path::Path) -> String {
    let p = path.to_string_lossy().replace('\\', "/");
    infx_config::layout::from_benchmarks_folder(&p).to_string()
}

/// Every per-recipe check on one recipe: Check 8, Check 13, Check 11 and the DP cuda-graph lint.
pub fn review_recipe(
    doc: &Document,
    binding: Option<&masters::Binding>,
    golden: &Golden,
    mode: GoldenMode,
) -> Vec<Diagnostic> {
    review_variants(doc, &recipe::variants(doc), binding, golden, mode)
}

/// [`review_recipe`] on the variants of `doc` the caller already expanded
/// (`recipe::variants`), so a caller that reads them too expands the recipe once.
pub fn review_variants(
    doc: &Document,
    vars: &[recipe::Variant<'_>],
    binding: Option<&masters::Binding>,
    golden: &Golden,
    mode: GoldenMode,
) -> Vec<Diagnostic> {
    let mut out = recipe::check_variants(&doc.path, vars);
    let p = path_key(doc);
    let agentic_path = p
        .split('/')
        .any(|c| c.contains("agentic") || c.starts_with("agentx"));
    let agentic_cmd = doc
        .root
        .get_path(&["benchmark", "command"])
        .or_else(|| doc.root.get_path(&["base", "benchmark", "command"]))
        .and_then(|n| n.as_str())
        .is_some_and(|c| c.contains("agentic"));
    let ctx = golden::Context {
        model_prefix: binding.and_then(|b| b.model_prefix.clone()),
        agentic: binding.is_some_and(|b| b.agentic) || agentic_path || agentic_cmd,
        usages: binding.map(|b| b.usages.clone()).unwrap_or_default(),
    };
    out.extend(golden::check_recipe(&doc.path, vars, &ctx, golden, mode));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::doc;

    proptest::proptest! {
        /// The one-walk pick gives what indexing a vector of all lines gives, for any numbers.
        #[test]
        fn added_lines_index_the_text_lines(
            lines in proptest::collection::vec("(a|b c|)(\r)?", 0..12),
            unterminated in proptest::bool::ANY,
            mut numbers in proptest::collection::vec(0usize..15, 0..8),
            sorted in proptest::bool::ANY,
        ) {
            let mut text = lines.join("\n");
            if !unterminated {
                text.push('\n');
            }
            if sorted {
                numbers.sort();
            }
            let all: Vec<&str> = text.lines().collect();
            let expected: Vec<(usize, String)> = numbers
                .iter()
                .filter_map(|&n| Some((n, all.get(n.checked_sub(1)?)?.to_string())))
                .collect();
            let picked = AddedLines::pick(std::sync::Arc::from(text.as_bytes()), &numbers);
            proptest::prop_assert_eq!(picked, expected);
        }
    }

    #[test]
    fn recipe_paths_match_bindings_whatever_their_prefix() {
        for p in [
            "benchmarks/multi_node/srt-slurm-recipes/a.yaml",
            "inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/a.yaml",
            "/abs/tree/benchmarks/multi_node/srt-slurm-recipes/a.yaml",
        ] {
            assert_eq!(
                path_key(&doc(p, "{}")),
                "benchmarks/multi_node/srt-slurm-recipes/a.yaml"
            );
        }
    }

    #[test]
    fn auto_golden_mode_follows_the_layout() {
        let master = doc(
            "configs/nvidia-master.yaml",
            "x-fp4-b300-sglang:\n  model-prefix: qwen3.5\n  framework: sglang\n  runner: b300\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - additional-settings:\n        - CONFIG_FILE=recipes/a.yaml\n",
        );
        let recipe = doc(
            "/t/benchmarks/multi_node/srt-slurm-recipes/a.yaml",
            "backend:\n  env:\n    SGLANG_SIMULATE_ACC_LEN: '3.39'\n  sglang_config:\n    decode:\n      speculative-algorithm: NEXTN\n      speculative-num-steps: 3\n",
        );
        let curve = "qwen3.5:\n  thinking_on:\n    3: 3.39\n";
        let mut golden = Golden::new();
        if let Ok(c) = golden::parse_curve(
            "qwen3.5_mtp",
            std::path::Path::new("g"),
            &doc("g", curve).root,
        ) {
            golden.insert("qwen3.5_mtp".into(), c);
        }
        let mut inputs = ReviewInputs {
            masters: vec![master],
            recipes: vec![recipe],
            golden,
            ..Default::default()
        };
        // Aug layout (no lane blocks): the pinned value matches the golden cell.
        assert!(review_tree(&inputs).is_empty());
        // Oct layout: the same value is a hard-coded AL.
        inputs.lanes.push(doc(
            "configs/srt-recipes/agentic-multi.yaml",
            "benchmark: {}\n",
        ));
        let d = review_tree(&inputs);
        assert_eq!(
            d.iter().map(|d| d.code).collect::<Vec<_>>(),
            [golden::CODE_HARDCODED]
        );
    }

    #[test]
    fn append_only_is_never_a_silent_pass() {
        let mut inputs = ReviewInputs {
            append_only_entry: true,
            ..Default::default()
        };
        let d = review_tree(&inputs);
        assert_eq!(d.len(), 1);
        assert_eq!(
            (d[0].code, d[0].severity),
            (CODE_APPEND_ONLY, infx_report::Severity::Warning)
        );
        assert!(d[0].message.starts_with("not run"));
        inputs.append_only_verdict = Some(Err(
            "append-only may not remove or modify existing generated recipes".into(),
        ));
        let d = review_tree(&inputs);
        assert_eq!(d.len(), 1);
        assert!(d[0].is_error() && d[0].message.contains("may not remove or modify"));
        inputs.append_only_verdict = Some(Ok(()));
        assert!(review_tree(&inputs).is_empty());
    }
}
