//! `cargo xtask validate`: the command line of the validate pipeline (crates/validate): parses
//! the arguments into its options and renders its report (docs/architecture.md, "The validate
//! pipeline").

use crate::output::{self, Format};
use infx_report::{Acknowledged, Severity};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

// The pipeline's types, named here as the other commands and the tests name them.
pub use infx_validate::{
    Allowed, CheckResult, Checklist, ConfigLoad, MAX_DIAGNOSTICS_PER_CODE, Options, Report,
    ReviewChange, ReviewLoad, RunScope, Status, acknowledge_allowed, acknowledged_suffix,
    cap_per_code, format_duration, is_unchanged, plural, summary_text, validate,
};

#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The benchmark tree to validate (its `configs/` holds the master configs). Default:
    /// `inferencex-e2e/` of the git work tree enclosing the current directory, or that work
    /// tree itself when it has none.
    #[arg(long, default_value_os_t = crate::paths::default_tree(), hide_default_value = true)]
    pub root: PathBuf,
    /// Base revision of the change (default: merge-base of HEAD with the upstream branch).
    #[arg(long)]
    pub base: Option<String>,
    /// Check everything, not only what the change touches.
    #[arg(long)]
    pub all: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Also verify image pins against their registries (network).
    #[arg(long, conflicts_with = "hermetic")]
    pub online: bool,
    /// With --online: serve a registry name from another base URL, e.g.
    /// `docker.io=http://127.0.0.1:5000` (repeatable; validated as `pin` validates it).
    #[arg(
        long = "registry-override",
        value_name = "NAME=URL",
        requires = "online"
    )]
    pub registry_overrides: Vec<String>,
    /// No network at all: any attempt is an error. Implied inside a Nix build sandbox.
    #[arg(long)]
    pub hermetic: bool,
    /// The PR's labels, comma-separated (`full-sweep-fail-fast,all-evals`; `""` = none). Checks
    /// the sweep labels and feeds `all-evals` / `evals-only` to the plan.
    #[arg(long, value_delimiter = ',', num_args = 0..=1)]
    pub labels: Option<Vec<String>>,
    /// The PR number (canonical pr-link in the entry skeleton; review's waiver lookup).
    #[arg(long)]
    pub pr: Option<u64>,
    /// Also list, one by one, the findings the base revision already had (by default they
    /// are counted in one summary line and do not fail the run; docs/baseline.md).
    #[arg(long)]
    pub show_baseline: bool,
    /// A `pull_request` event payload to read labels, PR number and head commit from (default
    /// inside GitHub Actions on a pull_request event: $GITHUB_EVENT_PATH).
    #[arg(long)]
    pub event: Option<PathBuf>,
    /// The reviewer checklist the review rules follow: `auto` that of the tree's own layout;
    /// `oct` also runs the October-only rules on an [Aug] tree (docs/review.md, "Rules carry
    /// their checklist").
    #[arg(long, value_enum, default_value_t = Checklist::Auto)]
    pub checklist: Checklist,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let hermetic = args.hermetic
        || std::env::var_os("NIX_BUILD_TOP").is_some()
        || std::env::var_os("INFX_HERMETIC").is_some();
    if hermetic && args.online {
        eprintln!(
            "error: --online needs the network, but this run is hermetic (--hermetic, INFX_HERMETIC or a Nix build sandbox)"
        );
        return Ok(ExitCode::from(2));
    }
    if !args.root.is_dir() {
        eprintln!("error: --root {}: not a directory", args.root.display());
        return Ok(ExitCode::from(2));
    }
    let registry_overrides =
        match crate::registry_override::parse_overrides(&args.registry_overrides) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(2));
            }
        };
    let opts = Options {
        base: args.base.clone(),
        all: args.all,
        online: args.online,
        online_check: online_check(),
        registry_overrides,
        hermetic,
        labels: args.labels.map(label_names),
        pr: args.pr,
        event: args.event.or_else(infx_validate::event_path_from_env),
        no_repository: false,
        display_root: None,
        scope: None,
        checklist: args.checklist,
        ..Options::new(args.root.clone())
    };
    let (report, inputs) = infx_validate::validate_keeping_inputs(&opts);
    // The process ends right after printing: the OS reclaims the parsed tree at once, far
    // faster than dropping it node by node (docs/performance.md, "Whole tree and one-config change").
    std::mem::forget(inputs);
    let mut diags = report.diagnostics();
    // Annotations and the human report show what the change introduced; JSON and SARIF carry
    // every finding with its state (docs/baseline.md, "Formats").
    let listed = match args.format {
        Format::Human => !args.show_baseline,
        Format::Github => true,
        Format::Json | Format::Sarif => false,
    };
    if listed {
        diags.retain(|d| !is_unchanged(d));
    }
    cap_per_code(&mut diags);
    let rendered = match args.format {
        // SARIF carries the acknowledged warnings as suppressed results.
        Format::Sarif => infx_report::render_sarif_with_acknowledged(
            &diags,
            &report.acknowledged,
            env!("CARGO_PKG_VERSION"),
        ),
        _ => output::render(&diags, &report.sources.0, args.format),
    };
    // A reader that went away (`| head -1`) ends the output, not the verdict.
    crate::hygiene::print_stdout(&rendered);
    let summary = summary_text(&report);
    match args.format {
        // Machine formats keep stdout parseable; the summary goes to stderr.
        Format::Json => {
            for r in &report.impact.keys {
                crate::hygiene::print_stdout(&format!("{}\n", impact_json(r)));
            }
            for b in &report.bindings {
                crate::hygiene::print_stdout(&format!("{}\n", b.to_json()));
            }
            for a in &report.acknowledged {
                crate::hygiene::print_stdout(&format!("{}\n", acknowledged_json(a)));
            }
            eprint!("{summary}");
        }
        // SARIF is one document on stdout: the impact and binding records stay out of it.
        Format::Sarif => eprint!("{summary}"),
        // The verdict is the report's last line, where eyes and scripts look (the binding
        // table comes before the step summary; docs/matrix.md, "Binding").
        Format::Human => {
            crate::hygiene::print_stdout(&crate::hygiene::escape_lines(
                &infx_validate::human_table(&report.bindings),
            ));
            crate::hygiene::print_stdout(&summary);
        }
        Format::Github => {
            crate::hygiene::print_stdout(&summary);
            if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") {
                write_step_summary(Path::new(&path), &report);
            }
        }
    }
    let code = if report.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    // As for the inputs above: the report's source texts are freed by the exit.
    std::mem::forget(report);
    Ok(code)
}

/// The label names of `--labels a, b`: each trimmed (GitHub trims label names, and a space
/// after the comma is how people write lists), empty ones dropped.
fn label_names(labels: Vec<String>) -> Vec<String> {
    labels
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// One impacted config as a JSON record (README, `--format json`).
fn impact_json(k: &infx_changelog::Impacted) -> serde_json::Value {
    serde_json::json!({
        "record": "impact",
        "config-key": k.key,
        "causes": k.causes.iter().map(|c| serde_json::json!({
            "path": c.path.to_string_lossy(),
            "line": c.line,
            "why": c.why,
        })).collect::<Vec<_>>(),
    })
}

/// One acknowledged warning as a JSON record (README, `--format json`).
fn acknowledged_json(a: &Acknowledged) -> serde_json::Value {
    let d = &a.diagnostic;
    serde_json::json!({
        "record": "acknowledged",
        "code": d.code,
        "path": d.path.as_ref().map(|p| p.display().to_string()),
        "line": d.span.map(|s| s.start.line()),
        "col": d.span.map(|s| s.start.col()),
        "message": d.message,
        "reason": a.reason,
        "allow_line": a.allow_span.start.line(),
    })
}

/// Appends the job summary: the checks table and the planned rows per config (markdown).
/// A summary that cannot be written is reported on stderr; the verdict stands.
fn write_step_summary(path: &Path, report: &Report) {
    use std::io::Write;
    let mut md = String::from(
        "### cargo xtask validate\n\n| check | verdict | time | scope |\n| --- | --- | --- | --- |\n",
    );
    for c in &report.checks {
        let verdict = match &c.status {
            Status::Skipped(why) => format!("skipped ({why})"),
            Status::Ran => c.verdict(),
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            c.name,
            infx_validate::md_escape(&verdict),
            format_duration(c.elapsed),
            infx_validate::md_escape(&c.scope)
        ));
    }
    let errors: usize = report.checks.iter().map(|c| c.count(Severity::Error)).sum();
    md.push_str(&format!(
        "\n**validate: {}** ({errors} error{}{})\n",
        if errors == 0 { "passed" } else { "FAILED" },
        plural(errors),
        acknowledged_suffix(report.acknowledged.len())
    ));
    if !report.bindings.is_empty() {
        md.push_str("\n### Planned rows → recipe variants\n");
        md.push_str(&infx_validate::markdown_tables(&report.bindings));
    }
    let written = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .and_then(|mut f| f.write_all(md.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "warning: cannot write the job summary {}: {e}",
            path.display()
        );
    }
}

/// The registry check of `--online`, in the build that has the registry client.
fn online_check() -> Option<infx_validate::OnlineCheck> {
    #[cfg(feature = "registry")]
    return Some(check_images_online);
    #[cfg(not(feature = "registry"))]
    None
}

/// `validate --online`: the registry confirms every pin (HEAD requests only).
#[cfg(feature = "registry")]
fn check_images_online(
    sites: &[infx_image::ImageSite],
    opts: &Options,
) -> Vec<infx_report::Diagnostic> {
    // The same client as `pin`: docker config and INFX_REGISTRY_* credentials, hermetic guard,
    // `--registry-override` (validated as pin validates it).
    let client = crate::cmd_pin::registry_client(
        opts.hermetic,
        opts.registry_overrides.clone(),
        std::time::Duration::from_secs(30),
    );
    infx_image::check_online(
        &client,
        sites,
        &infx_image::VerifyOptions::default(),
        8,
        &|_, _| {},
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_trimmed_and_empty_ones_dropped() {
        // `--labels 'full-sweep-fail-fast, evals-only'` dropped evals-only (issue #43).
        let given = ["full-sweep-fail-fast", " evals-only", " ", ""];
        assert_eq!(
            label_names(given.iter().map(|s| s.to_string()).collect()),
            ["full-sweep-fail-fast", "evals-only"]
        );
    }
}
