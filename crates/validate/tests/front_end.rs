//! The pipeline called as a library, as a second front end would call it (docs/architecture.md,
//! "The validate pipeline"): no xtask, no command line, the report as data.

use infx_report::Diagnostic;
use infx_validate::{Options, Status, validate};
use std::path::PathBuf;

fn bundled_tree() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../inferencex-e2e")
}

/// The bundled tree read as files (no repository, so no change: the whole tree is judged).
fn options() -> Options {
    Options {
        no_repository: true,
        ..Options::new(bundled_tree())
    }
}

#[test]
fn a_library_call_runs_every_check_and_returns_the_report() {
    let report = validate(&options());
    let names: Vec<&str> = report.checks.iter().map(|c| c.name).collect();
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
            "review",
            "allow"
        ]
    );
    assert!(!report.has_errors(), "{:#?}", report.diagnostics());
    let config = report.check("config").expect("the config check");
    assert_eq!(config.status, Status::Ran);
    assert!(config.scope.ends_with(" entries"), "{}", config.scope);
    // Outside git every config's planned rows are shown, as records a front end can render.
    assert!(!report.bindings.is_empty());
}

#[test]
fn online_without_a_registry_check_is_an_error_never_a_pass() {
    let report = validate(&Options {
        online: true,
        ..options()
    });
    let image = report.check("image").expect("the image check");
    assert!(
        image
            .diagnostics
            .iter()
            .any(|d| d.code == infx_image::codes::REGISTRY && d.is_error()),
        "{:#?}",
        image.diagnostics
    );
    assert!(report.has_errors());
}

#[test]
fn a_front_end_supplies_the_online_check() {
    fn refuses_all(sites: &[infx_image::ImageSite], _: &Options) -> Vec<Diagnostic> {
        vec![Diagnostic::error(
            infx_image::codes::REGISTRY,
            format!("checked {} references", sites.len()),
        )]
    }
    let report = validate(&Options {
        online: true,
        online_check: Some(refuses_all),
        ..options()
    });
    let image = report.check("image").expect("the image check");
    assert!(image.scope.ends_with(", online"), "{}", image.scope);
    let from_front_end: Vec<&Diagnostic> = image
        .diagnostics
        .iter()
        .filter(|d| d.message.starts_with("checked "))
        .collect();
    assert_eq!(from_front_end.len(), 1, "{:#?}", image.diagnostics);
}
