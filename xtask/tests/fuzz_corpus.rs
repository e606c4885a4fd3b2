//! The fuzz targets' kept corpus replayed on stable, without sanitizers or nightly, as ordinary
//! tests (issue #41): each target's body (`fuzz/bodies.rs`, the function its `fuzz_target!`
//! calls) over every file of `fuzz/seeds/<target>/` and of `fuzz/artifacts/<target>/` (crash
//! inputs kept after a fix), read at run time. A panic fails the test and names the input.
//! The sanitizer pass itself is `cargo xtask fuzz --smoke` (scheduled workflow; docs/security.md).

use std::path::{Path, PathBuf};

#[path = "../../fuzz/bodies.rs"]
mod bodies;

/// Every file kept for `target`, sorted; `None` (with a SKIP line) when `fuzz/` is not there.
fn kept_inputs(target: &str) -> Option<Vec<PathBuf>> {
    let fuzz = xtask::paths::workspace_root().join("fuzz");
    if !fuzz.join("seeds").is_dir() {
        eprintln!(
            "SKIP: fuzz corpus of {target}: {} not found",
            fuzz.join("seeds").display()
        );
        return None;
    }
    let mut files = Vec::new();
    for dir in ["seeds", "artifacts"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(dir).join(target)) else {
            continue; // no artifacts kept for this target
        };
        files.extend(
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file()),
        );
    }
    files.sort();
    Some(files)
}

/// Runs `body` over `target`'s kept inputs; fails with every input that panicked.
fn replay(target: &str, body: fn(&[u8])) {
    let Some(files) = kept_inputs(target) else {
        return;
    };
    assert!(!files.is_empty(), "fuzz/seeds/{target}/ holds no input");
    let mut panicked = Vec::new();
    for file in &files {
        let data = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        if std::panic::catch_unwind(|| body(&data)).is_err() {
            panicked.push(display(file));
        }
    }
    eprintln!("{target}: {} kept inputs replayed", files.len());
    assert!(panicked.is_empty(), "{target} panicked on: {panicked:?}");
}

fn display(p: &Path) -> String {
    let ws = xtask::paths::workspace_root();
    p.strip_prefix(&ws).unwrap_or(p).display().to_string()
}

#[test]
fn yaml_load_corpus() {
    replay("yaml_load", bodies::yaml_load);
}

#[test]
fn recipe_expand_corpus() {
    replay("recipe_expand", bodies::recipe_expand);
}

#[test]
fn changelog_entry_corpus() {
    replay("changelog_entry", bodies::changelog_entry);
}

#[test]
fn image_reference_corpus() {
    replay("image_reference", bodies::image_reference);
}

#[test]
fn www_authenticate_corpus() {
    replay("www_authenticate", bodies::www_authenticate);
}

/// Every target of `cargo xtask fuzz` has a replay here (a new target must add one).
#[test]
fn every_fuzz_target_is_replayed() {
    let this = include_str!("fuzz_corpus.rs");
    for target in xtask::cmd_fuzz::TARGETS {
        assert!(
            this.contains(&format!("replay(\"{target}\", bodies::{target})")),
            "fuzz target {target} has no corpus replay"
        );
    }
}
