//! Whether the contribution is complete: the change's impact (which configs can benchmark
//! differently), its coverage by appended changelog entries, and the PR's sweep labels. The
//! rules live in `infx_changelog::{impact, coverage, labels}`; this file loads their inputs.

use super::steps::{ChangeInfo, ChangeMode, ChangelogScope, recipe_uses};
use super::{CheckResult, ran, skipped};
use infx_changelog::PlanError;
use infx_changelog::{Appended, PlannedRows, coverage, planned_rows};
use infx_changelog::{Impact, RecipeUse, master_impact, recipe_impact, runners_impact};
use infx_changelog::{MatrixGenerator, RevisionInputs};
use infx_changelog::{PrContext, check_labels};
use infx_config::layout::{self, Role};
use infx_report::Diagnostic;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The configs whose benchmark the change can alter, with their causing lines.
pub(crate) fn change_impact(
    root: &Path,
    change: &ChangeInfo,
    loaded: &infx_config::LoadedConfigs,
    parsed: &infx_yaml::DocIndex<'_>,
    named: &[String],
) -> Impact {
    let mut impact = Impact::default();
    if !matches!(change.mode, ChangeMode::Change | ChangeMode::Fallback) {
        return impact;
    }
    let changed: BTreeSet<PathBuf> = change.paths_under(root).into_iter().collect();
    let text = |b: Option<Vec<u8>>| b.and_then(|b| String::from_utf8(b).ok());
    for doc in &loaded.masters {
        let rel = super::relative_to(root, &doc.path);
        if !changed.contains(&rel) {
            continue;
        }
        let base = if change.base.is_some() {
            text(change.base_bytes(&doc.path))
        } else {
            None
        };
        master_impact(&rel, base.as_deref(), doc, &mut impact);
    }
    let recipes_changed = changed
        .iter()
        .any(|p| matches!(layout::role(p), Role::Lane | Role::Recipe));
    if recipes_changed {
        let uses = recipe_uses(loaded, None);
        // A fragment is composed over its lane block; a `CONFIG_FILE=` recipe runs as written,
        // and only the variant its selector names counts.
        let uses: Vec<RecipeUse<'_>> = uses
            .iter()
            .map(|u| RecipeUse {
                key: u.key,
                rel: &u.rel,
                lane: (!u.standalone).then_some(u.lane),
                selector: u.selector,
            })
            .collect();
        let base = |rel: &str| {
            if change.base.is_some() {
                text(change.base_bytes(&root.join(rel)))
            } else {
                None
            }
        };
        let head = |rel: &str| text(change.head_bytes(&root.join(rel)));
        // The load's documents are of the working tree; the impact uses one only where its
        // text is the head side's (a commit standing in for the change may differ from it).
        let head_parsed = |rel: &str| parsed.get(&root.join(rel));
        recipe_impact(&uses, &changed, &base, &head, &head_parsed, &mut impact);
    }
    let runners_rel = Path::new(layout::RUNNERS);
    if changed.contains(runners_rel)
        && let Some(doc) = &loaded.runners
    {
        let base = if change.base.is_some() {
            text(change.base_bytes(&doc.path))
        } else {
            None
        };
        let entries: Vec<(&str, &str)> = loaded
            .views()
            .filter_map(|e| Some((e.key, e.runner()?)))
            .collect();
        runners_impact(runners_rel, base.as_deref(), doc, &entries, &mut impact);
    }
    launchers_impact(root, change, loaded, &changed, &mut impact);
    if !impact.keys.is_empty() {
        keep_configs_whose_rows_differ(&mut impact, loaded, change, named);
    }
    // Master order, so the report reads like the configs.
    let order = |k: &str| {
        loaded
            .entries
            .iter()
            .position(|e| e.key == k)
            .unwrap_or(usize::MAX)
    };
    impact.keys.sort_by_key(|k| order(&k.key));
    impact
}

/// The changed launcher scripts and the configs whose rows run them (docs/changelog.md,
/// "Launchers are part of the row"); other changed files a benchmark may run (shared shell,
/// Python, eval tasks, multinode and runner scripts) are listed as not assessed.
fn launchers_impact(
    root: &Path,
    change: &ChangeInfo,
    loaded: &infx_config::LoadedConfigs,
    changed: &BTreeSet<PathBuf>,
    impact: &mut Impact,
) {
    let candidates: Vec<&PathBuf> = changed.iter().filter(|p| layout::may_run(p)).collect();
    if candidates.is_empty() {
        return;
    }
    let text = |b: Option<Vec<u8>>| b.and_then(|b| String::from_utf8(b).ok());
    let launchers: Vec<(&str, infx_config::Launcher)> = loaded
        .views()
        .flat_map(|e| {
            infx_config::single_node_launchers(&e)
                .into_iter()
                .map(move |l| (e.key, l))
        })
        .collect();
    // Which launcher runs is decided by the head tree (the tagged name when it exists).
    let mut exists: std::collections::HashMap<String, bool> = Default::default();
    for rel in candidates {
        let name = rel.to_string_lossy();
        let mut keys: Vec<&str> = Vec::new();
        for (key, l) in &launchers {
            let runs = l.tagged == name
                || (l.historical == name
                    && !*exists
                        .entry(l.tagged.clone())
                        .or_insert_with(|| change.head_bytes(&root.join(&l.tagged)).is_some()));
            if runs && !keys.contains(key) {
                keys.push(key);
            }
        }
        if keys.is_empty() {
            impact.not_assessed.push(rel.clone());
            continue;
        }
        let base = if change.base.is_some() {
            text(change.base_bytes(&root.join(rel)))
        } else {
            None
        };
        let head = text(change.head_bytes(&root.join(rel)));
        infx_changelog::launcher_impact(rel, base.as_deref(), head.as_deref(), &keys, impact);
    }
}

/// A config needs an entry only when its sweep at head has a row that is new or differs from
/// the base's (docs/changelog.md, "Impact is about rows"): of the configs impacted only by
/// master-config or runners.yaml edits, those whose every head row has an identical base row
/// (points removed, runner nodes added, formatting) are dropped. A row holds everything the
/// generator derives from both files (image, topology, hardware facts such as
/// `total-cpu-dram-gb`, recipe references); a recipe's content is a cause of its own, kept.
/// Either side failing to generate keeps the config (the text comparison stands).
/// A config an appended entry already names is left as it is: its rows are planned anyway, and
/// the base's generation inputs (a parse of the base's masters) are read only when a config
/// would otherwise need an entry.
fn keep_configs_whose_rows_differ(
    impact: &mut Impact,
    loaded: &infx_config::LoadedConfigs,
    change: &ChangeInfo,
    named: &[String],
) {
    let by_config_files = |k: &infx_changelog::Impacted| {
        !named.contains(&k.key)
            && k.causes.iter().all(|c| {
                matches!(
                    layout::role(&c.path),
                    Role::Runners | Role::Master | Role::OtherMaster
                )
            })
    };
    if !impact.keys.iter().any(by_config_files) {
        return;
    }
    let Some(base) = change.base_inputs(loaded) else {
        return;
    };
    let (Ok(base_configs), Some(base_runners)) = (base.configs(), base.runners.as_ref()) else {
        return;
    };
    let Ok(head_configs) = infx_matrix::MasterConfigs::from_loaded(loaded) else {
        return;
    };
    let Some(head_runners) = loaded.runners.as_ref() else {
        return;
    };
    let base_runners = infx_matrix::Runners::from_node(&base_runners.root);
    let head_runners = infx_matrix::Runners::from_node(&head_runners.root);
    let rows = |configs: &infx_matrix::MasterConfigs<'_>,
                runners: &infx_matrix::Runners<'_>,
                key: &str| {
        if configs.get(key).is_none() {
            return Some(Vec::new());
        }
        let opts = infx_matrix::Options::for_binding(Some(&[key.to_string()]));
        infx_matrix::expand(configs, runners, &opts).ok()
    };
    let comparison = infx_matrix::RowComparison::of(&base_configs, &head_configs);
    impact.keys.retain_mut(|k| {
        if !by_config_files(k) {
            return true;
        }
        let (head, base) = (
            rows(&head_configs, &head_runners, &k.key),
            rows(&base_configs, &base_runners, &k.key),
        );
        let (Some(head), Some(base)) = (head.as_ref(), base.as_ref()) else {
            // Rows the base could not generate (a hardware record missing, say) and the head
            // can are all new: say so, the text comparison alone would not.
            if head.is_some()
                && let Some(first) = k.causes.first_mut()
            {
                first.why = format!(
                    "{}: the base could not generate its rows, this tree can",
                    first.why
                );
            }
            return true;
        };
        match comparison.first_difference(base, head) {
            // The cause names the row that makes the config run differently.
            Some(what) => {
                if let Some(first) = k.causes.first_mut() {
                    first.why = format!("{}: {what}", first.why);
                }
                true
            }
            None => false,
        }
    });
}

/// The appended entries as the coverage rules see them.
fn appended_of(scope: &ChangelogScope) -> Vec<Appended<'_>> {
    scope
        .appended
        .iter()
        .map(|(entry, line, keys)| Appended {
            entry,
            line: *line,
            keys: keys.clone(),
        })
        .collect()
}

/// The sweep plan of the appended entries (what coverage compares with the impact), computed
/// while loading: the planner owns its inputs, so it borrows the master documents for the
/// call and hands them back (no copy). Empty when coverage cannot run.
pub(crate) fn plan_appended(
    loaded: &mut infx_config::LoadedConfigs,
    base: Option<RevisionInputs>,
    scope: &ChangelogScope,
    modifiers: infx_changelog::Modifiers,
) -> Result<PlannedRows, PlanError> {
    let appended = appended_of(scope);
    if !scope.has_history || scope.additions_unreadable || appended.is_empty() {
        return Ok(Default::default());
    }
    let mut generator = MatrixGenerator {
        head: RevisionInputs {
            masters: std::mem::take(&mut loaded.masters),
            runners: loaded.runners.take(),
            kv_metadata: loaded.kv_metadata.into(),
        },
        base,
    };
    let rows = planned_rows(&appended, modifiers, &mut generator);
    loaded.masters = generator.head.masters;
    loaded.runners = generator.head.runners;
    rows
}

/// The coverage check (`changelog/entry-required`, `changelog/empty-plan`) on the plan
/// [`plan_appended`] computed.
pub(crate) fn check_coverage(
    planned: &Result<PlannedRows, PlanError>,
    scope: &ChangelogScope,
    impact: &Impact,
    pr: Option<u64>,
) -> CheckResult {
    if !scope.has_history {
        return skipped("coverage", "no base to compare with");
    }
    if scope.additions_unreadable {
        return skipped(
            "coverage",
            "the appended entries cannot be read; fix the changelog findings first",
        );
    }
    let appended = appended_of(scope);
    let mut described = format!(
        "{} impacted config{}, {} appended entr{}",
        impact.keys.len(),
        super::plural(impact.keys.len()),
        appended.len(),
        if appended.len() == 1 { "y" } else { "ies" }
    );
    if !impact.not_assessed.is_empty() {
        // Never silence: files a benchmark may run that no config is tied to are named.
        let shown: Vec<String> = impact
            .not_assessed
            .iter()
            .take(3)
            .map(|p| p.display().to_string())
            .collect();
        let more = impact.not_assessed.len().saturating_sub(shown.len());
        described.push_str(&format!(
            "; impact not assessed for {}{}",
            shown.join(", "),
            if more > 0 {
                format!(" (+{more} more)")
            } else {
                String::new()
            }
        ));
    }
    let changelog = Path::new(layout::CHANGELOG);
    match planned {
        Ok(rows) => ran(
            "coverage",
            coverage(impact, &appended, rows, changelog, pr),
            described,
        ),
        Err(e) => {
            let d = Diagnostic::error(
                infx_changelog::codes::PLAN,
                format!("the sweep plan of the appended entries fails ({}): {}", e.stage, e.message),
            )
            .with_path(changelog)
            .with_help("the PR's sweep cannot start until the plan generates; fix the entry or the configs");
            ran("coverage", vec![d], described)
        }
    }
}

/// The sweep-label check; skipped (visibly) when the labels are unknown.
pub(crate) fn check_pr_labels(
    pr: Option<&PrContext>,
    appends_entry: bool,
    impact: &Impact,
) -> CheckResult {
    let Some(pr) = pr else {
        return skipped(
            "labels",
            "labels unknown: pass --labels; CI reads the event",
        );
    };
    let scope = if pr.labels.is_empty() {
        "no labels".to_string()
    } else {
        pr.labels.join(", ")
    };
    ran(
        "labels",
        check_labels(pr, appends_entry, !impact.is_empty()),
        scope,
    )
}
