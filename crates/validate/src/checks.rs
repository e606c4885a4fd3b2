//! The checks of `validate`, in report order: each a function of the loaded [`Inputs`] with its
//! name and skip rule (docs/diff.md, "One load").

use super::binding::BindingRecord;
use super::inputs::Inputs;
use super::steps;
use super::{CheckResult, Status, contribution, ran, skipped};
use infx_report::Diagnostic;
use std::time::{Duration, Instant};

/// A check's result, plus the binding records only the matrix check produces.
pub(crate) struct Checked {
    pub result: CheckResult,
    pub bindings: Vec<BindingRecord>,
}

impl From<CheckResult> for Checked {
    fn from(result: CheckResult) -> Checked {
        Checked {
            result,
            bindings: Vec::new(),
        }
    }
}

/// One registered check.
pub(crate) struct Check {
    pub name: &'static str,
    /// Why it does not run on these inputs, if it does not.
    pub skip: fn(&Checking<'_>) -> Option<&'static str>,
    pub run: fn(&Checking<'_>) -> Checked,
}

const NEEDS_SOUND_CONFIGS: &str = "master configs have errors; fix those first";

pub(crate) const CHECKS: &[Check] = &[
    Check {
        name: "change",
        skip: never,
        run: change,
    },
    Check {
        name: "yaml",
        skip: never,
        run: yaml,
    },
    Check {
        name: "config",
        skip: never,
        run: config,
    },
    Check {
        name: "changelog",
        skip: never,
        run: changelog,
    },
    Check {
        name: "coverage",
        skip: |i| i.config.failed.then_some(NEEDS_SOUND_CONFIGS),
        run: coverage,
    },
    Check {
        name: "labels",
        skip: never,
        run: labels,
    },
    Check {
        name: "matrix",
        skip: matrix_skip,
        run: matrix,
    },
    Check {
        name: "recipe",
        skip: never,
        run: recipe,
    },
    Check {
        name: "image",
        skip: never,
        run: image,
    },
    Check {
        name: "diff-check",
        skip: never,
        run: diff_check,
    },
    Check {
        name: "review",
        skip: never,
        run: review,
    },
];

/// Runs every check, in table order, each with its time (plus the loading time of the inputs
/// only it uses). One after the other: on their own threads they cost more CPU (fresh
/// allocator arenas and page faults) than they saved in wall time (docs/diff.md, "One load").
/// The exception is the recipe check of a tree with many recipe files: it reads only the
/// configs and the parsed recipes, and is then the longest check (docs/performance.md,
/// "Whole tree and one-config change"), so it runs beside the others.
pub(crate) fn run_all(inputs: &Inputs, config: &ConfigChecked) -> Vec<Checked> {
    let checking = Checking {
        inputs,
        config,
        recipes: inputs.recipe_documents(),
    };
    let guarded = |check: &Check| {
        // A panicking check is a bug; it fails the run with a finding, not an abort. The
        // inputs are only read, so nothing half-updated is seen afterwards.
        let run = std::panic::AssertUnwindSafe(|| run_one(check, &checking));
        std::panic::catch_unwind(run).unwrap_or_else(|_| internal(check))
    };
    const RECIPES_WORTH_A_THREAD: usize = 32;
    let beside = CHECKS
        .iter()
        .position(|c| c.name == "recipe")
        .filter(|_| inputs.review.recipes.len() >= RECIPES_WORTH_A_THREAD);
    std::thread::scope(|s| {
        let recipe = beside.map(|at| (at, s.spawn(move || guarded(&CHECKS[at]))));
        let mut out: Vec<Option<Checked>> = CHECKS
            .iter()
            .enumerate()
            .map(|(at, check)| (beside != Some(at)).then(|| guarded(check)))
            .collect();
        if let Some((at, handle)) = recipe
            && let Some(slot) = out.get_mut(at)
        {
            *slot = Some(handle.join().unwrap_or_else(|_| internal(&CHECKS[at])));
        }
        out.into_iter().flatten().collect()
    })
}

/// The finding of a check that panicked.
fn internal(check: &Check) -> Checked {
    let d = Diagnostic::error(
        crate::codes::INTERNAL,
        format!("the {} check failed unexpectedly", check.name),
    );
    ran(check.name, vec![d], String::new()).into()
}

/// What every check reads: the loaded inputs, and the index of the parsed recipe files and
/// lane blocks, built once per run for the binder and the dry-run (docs/architecture.md,
/// "Parse once"). It derefs to the inputs.
pub(crate) struct Checking<'a> {
    pub inputs: &'a Inputs,
    /// The config check's verdict, worked out beside the load ([`config_rules`]).
    pub config: &'a ConfigChecked,
    pub recipes: infx_yaml::DocIndex<'a>,
}

impl std::ops::Deref for Checking<'_> {
    type Target = Inputs;
    fn deref(&self) -> &Inputs {
        self.inputs
    }
}

fn run_one(check: &Check, inputs: &Checking<'_>) -> Checked {
    let t = Instant::now();
    let wanted = inputs.opts.scope.as_ref().and_then(|s| s.checks.as_ref());
    if wanted.is_some_and(|w| !w.contains(&check.name)) {
        return skipped(check.name, "not needed: the head has no finding of it").into();
    }
    let mut checked = match (check.skip)(inputs) {
        Some(why) => skipped(check.name, why).into(),
        None => (check.run)(inputs),
    };
    checked.result.elapsed += t.elapsed();
    checked
}

fn never(_: &Checking<'_>) -> Option<&'static str> {
    None
}

fn with_load_time(mut result: CheckResult, load: Duration) -> Checked {
    result.elapsed += load;
    result.into()
}

fn change(i: &Checking<'_>) -> Checked {
    let mut diagnostics = i.change.diagnostics.clone();
    diagnostics.extend(i.change.sparse_findings(&i.root));
    let result = CheckResult {
        name: "change",
        status: Status::Ran,
        diagnostics,
        elapsed: Duration::ZERO,
        scope: i.change.describe(),
    };
    with_load_time(result, i.change_elapsed)
}

fn yaml(i: &Checking<'_>) -> Checked {
    let scope = format!(
        "{} files{}",
        i.yaml.files,
        if i.yaml.whole_tree {
            ""
        } else {
            " in the change's scope"
        }
    );
    with_load_time(ran("yaml", i.yaml.findings.clone(), scope), i.yaml.elapsed)
}

/// The config check's findings, which the pipeline worked out beside the load
/// ([`config_rules`]); its time includes loading the configs from their documents.
fn config(i: &Checking<'_>) -> Checked {
    let scope = format!("{} entries", i.configs.entries.len());
    with_load_time(
        ran("config", i.config.findings.clone(), scope),
        i.config_load_elapsed + i.config.elapsed,
    )
}

/// The config check's verdict: it gates the checks that need sound configs, and the load of
/// the impact and the plan.
pub(crate) struct ConfigChecked {
    pub findings: Vec<Diagnostic>,
    /// An error other than X5 (a runner label missing from runners.yaml): the configs are
    /// unsound.
    pub failed: bool,
    /// The rules' time.
    pub elapsed: Duration,
}

/// The config check, in the parts the pipeline runs beside the load (docs/performance.md):
/// the rules that read only the configs, then SR3/SR4, which open recipe files.
pub(crate) mod config_rules {
    use super::ConfigChecked;
    use crate::steps::{self, ChangeInfo};
    use infx_report::Diagnostic;
    use std::path::Path;
    use std::time::{Duration, Instant};

    /// The rules that read only the configs, with their time.
    pub(crate) fn before_recipes(
        configs: &infx_config::LoadedConfigs,
    ) -> (infx_config::RulesBeforeRecipes, Duration) {
        let t = Instant::now();
        (infx_config::rules_before_recipes(configs), t.elapsed())
    }

    /// The rest (SR3/SR4 over `documents`): every finding, and the time of both parts.
    pub(crate) fn finish(
        rules: infx_config::RulesBeforeRecipes,
        configs: &infx_config::LoadedConfigs,
        documents: &infx_yaml::DocIndex<'_>,
        before: Duration,
    ) -> (Vec<Diagnostic>, Duration) {
        let t = Instant::now();
        let findings = rules.finish_in(configs, documents).diagnostics;
        (findings, before + t.elapsed())
    }

    /// The finding of a [`finish`] that panicked (a bug).
    pub(crate) fn panicked() -> (Vec<Diagnostic>, Duration) {
        let d = Diagnostic::error(
            crate::codes::INTERNAL,
            "the config check failed unexpectedly",
        );
        (vec![d], Duration::ZERO)
    }

    /// The verdict over the findings: a recipe file the change renamed is named in them.
    pub(crate) fn verdict(
        mut findings: Vec<Diagnostic>,
        elapsed: Duration,
        change: &ChangeInfo,
        root: &Path,
    ) -> ConfigChecked {
        steps::name_renamed_recipes(&mut findings, change, root);
        let failed = findings
            .iter()
            .any(|d| d.is_error() && d.code != infx_config::codes::X5);
        ConfigChecked {
            findings,
            failed,
            elapsed,
        }
    }
}

fn changelog(i: &Checking<'_>) -> Checked {
    steps::check_changelog(&i.changelog, &i.change, &i.configs, i.modifiers).into()
}

fn coverage(i: &Checking<'_>) -> Checked {
    contribution::check_coverage(&i.planned, &i.changelog.scope, &i.impact, i.pr.number).into()
}

fn labels(i: &Checking<'_>) -> Checked {
    let mut result = contribution::check_pr_labels(
        i.pr.context.as_ref(),
        !i.changelog.scope.appended.is_empty(),
        &i.impact,
    );
    result
        .diagnostics
        .extend(i.pr.event_findings.iter().cloned());
    with_load_time(result, i.pr.elapsed)
}

fn matrix_skip(i: &Checking<'_>) -> Option<&'static str> {
    if i.config.failed {
        Some(NEEDS_SOUND_CONFIGS)
    } else if i.configs.runners.is_none() {
        Some("no configs/runners.yaml")
    } else if i.touched.as_ref().is_some_and(Vec::is_empty) {
        Some("no config touched by the change")
    } else {
        None
    }
}

/// Rows for the touched configs; every point binds exactly one recipe variant. The bindings of
/// the configs the change impacts or its entries name are recorded for the report.
fn matrix(i: &Checking<'_>) -> Checked {
    let Some(rdoc) = i.configs.runners.as_ref() else {
        return skipped("matrix", "no configs/runners.yaml").into();
    };
    let keys = i.touched.as_deref();
    match infx_matrix::MasterConfigs::from_loaded(&i.configs) {
        Ok(configs) => {
            let mut runners = infx_matrix::Runners::from_node(&rdoc.root);
            runners.tree_root = Some(i.root.clone());
            runners.parsed = Some(&i.recipes);
            let (d, bindings) = bind_with_records(&configs, &runners, keys, i);
            let scope = scope_of_keys(keys, i.configs.entries.len());
            Checked {
                result: ran("matrix", d, scope),
                bindings,
            }
        }
        Err(d) => ran("matrix", vec![d], String::new()).into(),
    }
}

/// The matrix step's binding (as `infx_matrix::bind_configs`) plus the records of the
/// points whose config is shown.
fn bind_with_records(
    configs: &infx_matrix::MasterConfigs<'_>,
    runners: &infx_matrix::Runners<'_>,
    keys: Option<&[String]>,
    i: &Checking<'_>,
) -> (Vec<Diagnostic>, Vec<BindingRecord>) {
    let selection = match keys {
        Some(k) => infx_matrix::Selection::TestConfig(infx_matrix::TestConfig {
            config_keys: k.to_vec(),
            ..Default::default()
        }),
        None => infx_matrix::Selection::FullSweep(infx_matrix::FullSweep::default()),
    };
    let opts = infx_matrix::Options {
        selection,
        evals: infx_matrix::EvalMode::None,
        runner_node_filter: None,
        scenario_types: None,
    };
    match infx_matrix::expand_with_origins(configs, runners, &opts) {
        Ok(points) => super::binding::bind_and_record(&points, &i.root, &i.recipes, &i.shown),
        Err(d) => (vec![d], Vec::new()),
    }
}

fn scope_of_keys(keys: Option<&[String]>, total: usize) -> String {
    match keys {
        None => format!("all {total} configs"),
        Some(k) if k.len() <= 3 => k.join(", "),
        Some(k) => format!("{} configs", k.len()),
    }
}

/// Every variant of every recipe the touched configs use passes the dry-run.
fn recipe(i: &Checking<'_>) -> Checked {
    steps::check_recipes(&i.root, &i.configs, &i.recipes, i.touched.as_deref()).into()
}

/// Every image reference digest-pinned (offline); with `--online` the registry agrees.
fn image(i: &Checking<'_>) -> Checked {
    let mut sites = Vec::new();
    let mut diagnostics = Vec::new();
    let image_bearing = |d: &&infx_yaml::Document| {
        use infx_config::layout::{Role, role};
        matches!(
            role(&super::relative_to(&i.root, &d.path)),
            Role::Master | Role::OtherMaster | Role::Recipe | Role::Launcher | Role::Benchmark
        )
    };
    let docs = i
        .configs
        .masters
        .iter()
        .chain(i.review.recipes.iter().chain(&i.docs).filter(image_bearing));
    for doc in docs {
        let (s, d) = infx_image::sites_in(doc);
        sites.extend(s);
        diagnostics.extend(d);
    }
    // The added recipes checked as they were parsed: their sites, found then.
    for r in &i.checked_recipes {
        sites.extend(r.sites.iter().cloned());
        diagnostics.extend(r.image_findings.iter().cloned());
    }
    let (policy, policy_findings) = &i.pin_policy;
    diagnostics.extend(policy_findings.iter().cloned());
    diagnostics.extend(infx_image::check_offline_with(&sites, *policy));
    diagnostics.extend(infx_image::dropped_pins(&sites, i.base_image_sites()));
    let online = i.opts.online;
    let scope = format!(
        "{} references{}",
        sites.len(),
        if online { ", online" } else { ", offline" }
    );
    if online {
        match i.opts.online_check {
            Some(check) => diagnostics.extend(check(&sites, &i.opts)),
            // The CLI hands `--online` to the registry build (README, "What builds when"); a
            // caller that still asks this build gets a finding, never a silent pass.
            None => diagnostics.push(
                Diagnostic::error(
                    infx_image::codes::REGISTRY,
                    "the online image check needs the registry client, which this build of xtask lacks",
                )
                .with_help(
                    "run `cargo xtask validate --online`, or build xtask with its default features",
                ),
            ),
        }
    }
    ran("image", diagnostics, scope).into()
}

fn diff_check(i: &Checking<'_>) -> Checked {
    steps::check_diff(&i.change).into()
}

/// The repository-decidable reviewer checks, and Check 3 (docs/review.md): touched configs
/// that have a cookbook file.
fn review(i: &Checking<'_>) -> Checked {
    let mut diagnostics = i.review_load_findings.clone();
    diagnostics.extend(infx_review::review_tree_of(&i.review, &i.configs.masters));
    // The added recipes no config references were reviewed as they were parsed.
    let checked = &i.checked_recipes;
    diagnostics.extend(
        checked
            .iter()
            .flat_map(|r| r.review_findings.iter().cloned()),
    );
    let parsed = infx_yaml::DocIndex::new(
        i.docs
            .iter()
            .chain(&i.review.recipes)
            .chain(&i.review.lanes),
    )
    .with_failures(&i.parse_failures);
    // What depends on the published cookbook is settled when the PR merges: the labels' rule
    // (docs/review.md, "Check 3: the cookbook diff").
    let pr = i.pr.context.as_ref();
    diagnostics.extend(
        infx_review::cookbook::check_configs(
            &i.root,
            &i.configs.masters,
            i.configs.runners.as_ref(),
            &parsed,
            i.touched.as_deref(),
        )
        .into_iter()
        .map(|d| {
            if infx_review::cookbook::PUBLISHED.contains(&d.code) {
                infx_changelog::at_merge_time(pr, d)
            } else {
                d
            }
        }),
    );
    let scope = format!(
        "{} config files, {} recipes",
        i.configs.masters.len(),
        i.review.recipes.len() + checked.len()
    );
    ran("review", diagnostics, scope).into()
}

#[cfg(test)]
mod tests {
    use super::CHECKS;

    #[test]
    fn the_table_names_each_check_once_in_report_order() {
        let names: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "change",
                "yaml",
                "config",
                "changelog",
                "coverage",
                "labels",
                "matrix",
                "recipe",
                "image",
                "diff-check",
                "review"
            ]
        );
    }
}
