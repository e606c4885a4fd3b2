//! The PR's sweep labels (`pr/labels`, README.md "Before you open a PR"): exactly one primary
//! label when the change can affect benchmark performance, modifiers only beside a primary,
//! and the plan modifiers the labels turn on.

use crate::codes;
use crate::gate::Modifiers;
use infx_report::{Diagnostic, Severity};

/// Primary labels; each starts the PR sweep. The first is the recommended one; the last two are
/// legacy primaries upstream's workflow still honours.
pub(crate) const PRIMARY: [&str; 5] = [
    "full-sweep-fail-fast",
    "full-sweep-enabled",
    "non-canary-full-sweep-enabled",
    "sweep-enabled",
    "full-sweep-fail-fast-no-canary",
];
/// Modifiers: meaningful only beside a primary label.
pub(crate) const MODIFIERS: [&str; 3] = ["all-evals", "evals-only", "agentx-fast"];
/// Modifiers that keep a maintainer from reusing an earlier sweep while applied.
pub(crate) const BLOCK_REUSE: [&str; 2] = ["evals-only", "agentx-fast"];
/// A head commit message containing this skips the PR sweep.
pub const SKIP_SWEEP: &str = "[skip-sweep]";

/// What is known about the pull request.
#[derive(Debug, Clone, Default)]
pub struct PrContext {
    pub labels: Vec<String>,
    /// The head commit's message contains `[skip-sweep]`.
    pub skip_sweep: bool,
    /// The labels came from a `pull_request` event in CI (findings that warn locally fail there).
    pub ci_event: bool,
}

/// A finding only the merge settles — the PR has no sweep label yet, an upstream document
/// (the published cookbook command) is not out yet — at the severity it has where it is
/// judged: a warning before the PR exists (a local run, `--labels`), an error in CI on a
/// `pull_request` event, where the PR would merge with it (README, "Before you open a PR").
/// The one place that decides; every merge-time finding goes through it.
pub fn at_merge_time(pr: Option<&PrContext>, mut d: Diagnostic) -> Diagnostic {
    d.severity = if pr.is_some_and(|p| p.ci_event) {
        Severity::Error
    } else {
        Severity::Warning
    };
    d
}

/// The plan modifiers the labels turn on (upstream passes `--all-evals` / `--evals-only`).
pub fn modifiers(labels: &[String]) -> Modifiers {
    Modifiers {
        all_evals: labels.iter().any(|l| l == "all-evals"),
        evals_only: labels.iter().any(|l| l == "evals-only"),
    }
}

/// The label findings. `affects_benchmarks` = the change impacts some config or appends an
/// entry (a sweep is what the contribution needs).
pub fn check_labels(
    pr: &PrContext,
    appends_entry: bool,
    affects_benchmarks: bool,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let labels_of = |set: &[&str]| -> Vec<&str> {
        pr.labels
            .iter()
            .map(String::as_str)
            .filter(|l| set.contains(l))
            .collect()
    };
    let primaries = labels_of(&PRIMARY);
    let modifiers = labels_of(&MODIFIERS);
    let recommend = format!(
        "keep exactly one of: {} (recommended: {})",
        PRIMARY[..3].join(", "),
        PRIMARY[0]
    );
    if primaries.len() > 1 {
        out.push(
            Diagnostic::error(
                codes::PR_LABELS,
                format!(
                    "the PR has {} conflicting primary sweep labels ({}): upstream's sweep refuses to start",
                    primaries.len(),
                    primaries.join(", ")
                ),
            )
            .with_help(recommend.clone()),
        );
    }
    if primaries.is_empty() && !modifiers.is_empty() {
        out.push(
            Diagnostic::error(
                codes::PR_LABELS,
                format!(
                    "modifier label{} {} without a primary sweep label: modifiers only change a sweep that a primary label starts",
                    if modifiers.len() == 1 { "" } else { "s" },
                    modifiers.join(", ")
                ),
            )
            .with_help(format!("add one primary label; {recommend}")),
        );
    } else if primaries.is_empty() && (appends_entry || affects_benchmarks) {
        let message = if appends_entry {
            "the change appends a perf-changelog entry but the PR has no primary sweep label: no sweep will run"
        } else {
            "the change can affect benchmark performance but the PR has no primary sweep label: no sweep will run"
        };
        let d = at_merge_time(Some(pr), Diagnostic::error(codes::PR_LABELS, message));
        out.push(d.with_help(format!("add one primary label; {recommend}")));
    }
    if pr.skip_sweep && appends_entry && primaries.len() == 1 {
        out.push(
            Diagnostic::warning(
                codes::PR_LABELS,
                "the head commit message contains [skip-sweep]: the PR sweep is skipped",
            )
            .with_help("push a commit without [skip-sweep] to run the sweep"),
        );
    }
    let blocking: Vec<&str> = modifiers
        .iter()
        .copied()
        .filter(|m| BLOCK_REUSE.contains(m))
        .collect();
    if !blocking.is_empty() && primaries.len() == 1 {
        out.push(Diagnostic::note(
            codes::PR_LABELS,
            format!(
                "{} block{} sweep reuse (/use <run_id>) while applied",
                blocking.join(" and "),
                if blocking.len() == 1 { "s" } else { "" }
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use infx_report::Severity;

    fn run(labels: &[&str], ci: bool) -> Vec<(Severity, String)> {
        let pr = PrContext {
            labels: labels.iter().map(|l| l.to_string()).collect(),
            skip_sweep: false,
            ci_event: ci,
        };
        check_labels(&pr, true, true)
            .into_iter()
            .map(|d| (d.severity, d.message))
            .collect()
    }

    #[test]
    fn exactly_one_primary_passes() {
        for p in PRIMARY {
            assert!(run(&[p, "all-evals"], true).is_empty(), "{p}");
        }
    }

    #[test]
    fn none_warns_locally_and_fails_in_ci() {
        assert_eq!(run(&["ci-patchwork"], false)[0].0, Severity::Warning);
        assert_eq!(run(&[], true)[0].0, Severity::Error);
        assert!(run(&[], true)[0].1.contains("no sweep will run"));
    }

    #[test]
    fn two_primaries_or_a_lone_modifier_fail() {
        let two = run(&["full-sweep-enabled", "sweep-enabled"], false);
        assert_eq!(two.len(), 1);
        assert_eq!(two[0].0, Severity::Error);
        let lone = run(&["evals-only"], false);
        assert_eq!(lone[0].0, Severity::Error);
        assert!(lone[0].1.contains("without a primary"));
    }

    #[test]
    fn modifiers_feed_the_plan() {
        let m = modifiers(&["all-evals".into(), "full-sweep-enabled".into()]);
        assert!(m.all_evals && !m.evals_only);
    }
}
