//! Whether the change's appended changelog entries cover its impact (README.md,
//! "Before you open a PR"): `changelog/entry-required` for an impacted config no appended entry plans a row
//! for, `changelog/empty-plan` for an appended entry whose plan has no row at all.

use crate::codes;
use crate::entry::Entry;
use crate::gate::Modifiers;
use crate::impact::Impact;
use crate::plan::{
    GenEvals, GenRequest, Generator, PlanError, PlanStage, Revision, append_only_delta,
    generator_calls,
};
use infx_report::{Diagnostic, Span};
use std::path::Path;

/// An appended entry with the head line its `- config-keys:` starts on and its keys resolved.
#[derive(Debug, Clone)]
pub struct Appended<'a> {
    pub entry: &'a Entry,
    pub line: usize,
    pub keys: Vec<String>,
}

/// Planned row counts: per appended entry, (config key, rows) for every key it generates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlannedRows {
    pub per_entry: Vec<Vec<(String, usize)>>,
}

impl PlannedRows {
    /// Rows the whole plan has for `key` (any entry).
    pub fn rows_for(&self, key: &str) -> usize {
        self.per_entry
            .iter()
            .flatten()
            .filter(|(k, _)| k == key)
            .map(|(_, n)| n)
            .sum()
    }
    pub fn entry_total(&self, i: usize) -> usize {
        self.per_entry
            .get(i)
            .map_or(0, |e| e.iter().map(|(_, n)| n).sum())
    }
}

/// Counts the rows the sweep plan generates per entry and key: the same generator calls as the
/// plan (claim maps, throughput and eval passes, the append-only delta), split per config so
/// each row is attributed to its key.
pub fn planned_rows(
    appended: &[Appended<'_>],
    modifiers: Modifiers,
    generator: &mut dyn Generator,
) -> Result<PlannedRows, PlanError> {
    let entries: Vec<Entry> = appended.iter().map(|a| a.entry.clone()).collect();
    let resolved: Vec<Vec<String>> = appended.iter().map(|a| a.keys.clone()).collect();
    let mut out = PlannedRows {
        per_entry: vec![Vec::new(); appended.len()],
    };
    let gen_err = |m: String| PlanError {
        stage: PlanStage::Generator,
        message: m,
    };
    for (i, req) in generator_calls(&entries, &resolved, modifiers) {
        for key in &req.config_keys {
            let one = GenRequest {
                config_keys: vec![key.clone()],
                ..req.clone()
            };
            let mut rows = generator.generate(&one).map_err(gen_err)?;
            if entries[i].append_only && req.evals == GenEvals::NoEvals {
                let base = generator
                    .generate(&GenRequest {
                        revision: Revision::Base,
                        ..one.clone()
                    })
                    .map_err(gen_err)?;
                rows = append_only_delta(&base, &rows).map_err(|m| PlanError {
                    stage: PlanStage::AppendOnly,
                    message: m,
                })?;
            }
            let counts = &mut out.per_entry[i];
            match counts.iter_mut().find(|(k, _)| k == key) {
                Some((_, n)) => *n += rows.len(),
                None => counts.push((key.clone(), rows.len())),
            }
        }
    }
    Ok(out)
}

/// A ready-to-append entry for `keys`, in the form the entry rules accept (the placeholder
/// link until the PR number is known).
pub(crate) fn entry_skeleton(keys: &[&str], pr: Option<u64>) -> String {
    let mut s = String::from("- config-keys:\n");
    for k in keys {
        s.push_str(&format!("    - {k}\n"));
    }
    s.push_str("  description:\n    - <what changed and why>\n");
    let link = match pr {
        Some(n) => format!("https://github.com/SemiAnalysisAI/InferenceX/pull/{n}"),
        None => "https://github.com/SemiAnalysisAI/InferenceX/pull/XXX".to_string(),
    };
    s.push_str(&format!("  pr-link: {link}\n"));
    s
}

/// The coverage findings. `changelog` is the changelog's path (tree-relative) for entry
/// findings; impact causes carry their own paths.
pub fn coverage(
    impact: &Impact,
    appended: &[Appended<'_>],
    rows: &PlannedRows,
    changelog: &Path,
    pr: Option<u64>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, a) in appended.iter().enumerate() {
        if rows.entry_total(i) > 0 {
            continue;
        }
        // The planner claims a config's scenarios once (upstream's de-duplication): an entry
        // whose configs an earlier entry already plans is not empty. The finding names the
        // configs that run nothing anywhere in the plan, or the keys as written when they
        // resolve to no config.
        let idle: Vec<String> = if a.keys.is_empty() {
            a.entry
                .config_keys
                .iter()
                .map(|k| format!("{k} (resolves to no config)"))
                .collect()
        } else {
            a.keys
                .iter()
                .filter(|k| rows.rows_for(k) == 0)
                .cloned()
                .collect()
        };
        if idle.is_empty() && !a.keys.is_empty() {
            continue;
        }
        let d = Diagnostic::error(
            codes::EMPTY_PLAN,
            format!(
                "this entry plans no benchmark row: the sweep of this PR would run nothing for {}",
                if idle.is_empty() {
                    "it (no config-keys)".to_string()
                } else {
                    idle.join(", ")
                }
            ),
        )
        .at(changelog, Span::line(a.line))
        .with_help("name the configs the change affects, and a scenario-type they have (or none)");
        out.push(d);
    }
    let uncovered: Vec<&crate::impact::Impacted> = impact
        .keys
        .iter()
        .filter(|k| rows.rows_for(&k.key) == 0)
        .collect();
    let all_missing: Vec<&str> = uncovered.iter().map(|k| k.key.as_str()).collect();
    for k in uncovered {
        let Some(first) = k.causes.first() else {
            continue;
        };
        let named = appended.iter().any(|a| a.keys.contains(&k.key));
        let why = if named {
            "an appended entry names it, but its plan has no row for it"
        } else {
            "no appended perf-changelog entry names it"
        };
        let mut d = Diagnostic::error(
            codes::ENTRY_REQUIRED,
            format!(
                "'{}' can benchmark differently ({}), and {why}",
                k.key, first.why
            ),
        )
        .at(&first.path, Span::line(first.line))
        .with_help(format!(
            "append at the physical end of perf-changelog.yaml (after one empty line):\n{}",
            entry_skeleton(&all_missing, pr)
        ));
        for c in k.causes.iter().skip(1).take(5) {
            d = d.with_note(format!("also {}:{}: {}", c.path.display(), c.line, c.why));
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impact::{Cause, Impacted};
    use crate::plan::Row;
    use infx_matrix::ScenarioType;
    use std::collections::BTreeSet;

    /// Rows per key: `a` has two agentic rows, `b` has none.
    struct Fake;
    impl Generator for Fake {
        fn generate(&mut self, req: &GenRequest) -> Result<Vec<Row>, String> {
            let agentic = req
                .scenario_types
                .as_ref()
                .is_none_or(|s| s.contains(&ScenarioType::AgenticCoding));
            let n = match (req.config_keys[0].as_str(), agentic) {
                ("a", true) => 2,
                _ => 0,
            };
            Ok(vec![Row::new(); n])
        }
        fn check_append_only_scope(
            &mut self,
            _: &[(String, BTreeSet<ScenarioType>)],
        ) -> Result<(), String> {
            Ok(())
        }
    }

    fn entry(keys: &[&str], scen: Option<ScenarioType>) -> Entry {
        Entry {
            config_keys: keys.iter().map(|k| k.to_string()).collect(),
            description: vec!["x".into()],
            pr_link: "XXX".into(),
            evals_only: false,
            all_evals: false,
            append_only: false,
            no_evals: true,
            eval_min_prefill_ep: None,
            scenario_type: scen.map(|s| vec![s]),
            span: Span::line(1),
        }
    }

    fn impact(key: &str) -> Impact {
        Impact {
            keys: vec![Impacted {
                key: key.into(),
                causes: vec![Cause {
                    path: "configs/m.yaml".into(),
                    line: 7,
                    why: "master entry changed".into(),
                }],
            }],
            ..Impact::default()
        }
    }

    fn codes(entries: &[Entry], impacted: &str) -> Vec<String> {
        let appended: Vec<Appended> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| Appended {
                entry: e,
                line: 10 + i,
                keys: e.config_keys.clone(),
            })
            .collect();
        let rows = planned_rows(&appended, Modifiers::default(), &mut Fake).unwrap();
        coverage(
            &impact(impacted),
            &appended,
            &rows,
            Path::new("perf-changelog.yaml"),
            None,
        )
        .iter()
        .map(|d| format!("{} {}", d.code, d.location()))
        .collect()
    }

    #[test]
    fn a_covering_entry_passes() {
        assert!(codes(&[entry(&["a"], None)], "a").is_empty());
    }

    #[test]
    fn a_missing_or_wrong_entry_fails_at_the_cause() {
        assert_eq!(
            codes(&[], "a"),
            ["changelog/entry-required configs/m.yaml:7:1"]
        );
        assert_eq!(
            codes(&[entry(&["b"], None)], "a"),
            [
                "changelog/empty-plan perf-changelog.yaml:10:1",
                "changelog/entry-required configs/m.yaml:7:1"
            ]
        );
    }

    #[test]
    fn an_entry_whose_scenario_yields_nothing_is_empty() {
        assert_eq!(
            codes(&[entry(&["a"], Some(ScenarioType::FixedSeqLen))], "a"),
            [
                "changelog/empty-plan perf-changelog.yaml:10:1",
                "changelog/entry-required configs/m.yaml:7:1"
            ]
        );
    }

    /// Upstream's planner claims a config once: a second entry naming it plans no row of its
    /// own, and is not an empty plan (the config is planned).
    #[test]
    fn two_entries_for_one_config_plan_it_once_without_empty_plan() {
        let entries = [entry(&["a"], None), entry(&["a"], None)];
        assert!(codes(&entries, "a").is_empty());
    }

    #[test]
    fn an_empty_plan_names_its_configs() {
        let entries = [entry(&["b"], None)];
        let appended = [Appended {
            entry: &entries[0],
            line: 10,
            keys: vec![],
        }];
        let rows = planned_rows(&appended, Modifiers::default(), &mut Fake).unwrap();
        let d = coverage(
            &Impact::default(),
            &appended,
            &rows,
            Path::new("perf-changelog.yaml"),
            None,
        );
        assert_eq!(d.len(), 1);
        assert!(
            d[0].message
                .ends_with("nothing for b (resolves to no config)"),
            "{}",
            d[0].message
        );
    }

    #[test]
    fn the_skeleton_is_a_valid_entry() {
        let s = entry_skeleton(&["a", "b"], None);
        let parsed = crate::parse_changelog(s.as_bytes(), "x", crate::Dialect::Oct).unwrap();
        assert_eq!(parsed.entries.len(), 1);
        assert!(crate::validate_entry(&parsed.entries[0], crate::Dialect::Oct, Some(&s)).is_ok());
        assert!(entry_skeleton(&["a"], Some(12)).contains("/pull/12\n"));
    }
}
