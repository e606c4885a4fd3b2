//! One `validate --all` run parses each YAML file once: the documents the load step holds are
//! what the later checks read (docs/architecture.md). Counted on the bundled tree and on the
//! August and October corpus trees (skipped, visibly, when ../shared is absent). The counter sits in
//! infx-yaml's parse entry point; this binary holds a single test, so no other run touches it.
//!
//! The readers that need a file again (config SR4, the matrix binder and node counts, the
//! recipe dry-run, review's golden curves and cookbooks) take it from the parsed documents
//! (`infx_yaml::DocIndex`); the changelog check parses only what was appended.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use xtask::validate::{Options, validate};

/// Parses per file of one `validate --all` run, keyed by the path relative to `tree` (readers
/// label a file by its absolute or its tree-relative path). Texts that are no file are labelled
/// in angle brackets (`<zip value>`: srtctl's re-read of one zip value, `<added lines>`: the
/// changelog gate's joined additions) and are not counted.
fn parses_of_one_run(tree: &Path) -> BTreeMap<PathBuf, usize> {
    let tree = tree.canonicalize().expect("the tree exists");
    infx_yaml::parse_count::start();
    let report = validate(&Options {
        all: true,
        hermetic: true,
        ..Options::new(&tree)
    });
    let counts = infx_yaml::parse_count::take();
    assert!(report.check("yaml").is_some(), "the run parsed the tree");
    let mut per_file = BTreeMap::new();
    for (path, n) in counts {
        if path.to_string_lossy().starts_with('<') {
            continue;
        }
        let rel = path
            .strip_prefix(&tree)
            .map_or(path.clone(), Path::to_path_buf);
        *per_file.entry(rel).or_insert(0) += n;
    }
    per_file
}

#[test]
fn each_yaml_file_is_parsed_once_per_run() {
    let mut trees = vec![xtask::paths::workspace_root().join("inferencex-e2e")];
    match xtask::paths::corpus_dir() {
        Some(c) => trees.extend([
            c.join("inferencex-aug2026"),
            c.join("inferencex-oct2026/inferencex-e2e"),
        ]),
        None => {
            eprintln!("SKIP: no ../shared/corpus (INFX_CORPUS); the corpus trees are not counted")
        }
    }
    let mut failures = Vec::new();
    for tree in trees {
        let counts = parses_of_one_run(&tree);
        assert!(
            counts
                .keys()
                .any(|p| p == Path::new("configs/nvidia-master.yaml")),
            "{}: the counter saw no master config: {counts:?}",
            tree.display()
        );
        for (rel, n) in counts.iter().filter(|(_, n)| **n > 1) {
            failures.push(format!(
                "{}: {} parsed {n} times",
                tree.display(),
                rel.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "files parsed more than once:\n{}",
        failures.join("\n")
    );
}
