//! One `validate --all` run parses each YAML file once: the documents the load step holds are
//! what the later checks read (docs/architecture.md). Counted on the bundled tree and on the
//! August corpus tree (skipped, visibly, when ../shared is absent). The counter sits in
//! infx-yaml's parse entry point; this binary holds a single test, so no other run touches it.
//!
//! Not yet true for the files in [`NOT_YET`], whose readers still load them from disk
//! themselves (issue 14): those are printed as NOT YET on every run instead of being asserted;
//! every other file (master configs, runners.yaml, the rest of the tree) must parse once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use xtask::validate::{Options, validate};

/// Parses per file of one `validate --all` run, keyed by the path relative to `tree` (readers
/// label a file by its absolute or its tree-relative path).
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
        let rel = path
            .strip_prefix(&tree)
            .map_or(path.clone(), Path::to_path_buf);
        *per_file.entry(rel).or_insert(0) += n;
    }
    per_file
}

/// Files still parsed again by their own readers: (which files, who re-reads them).
type Matcher = fn(&str) -> bool;
const NOT_YET: &[(Matcher, &str)] = &[
    (
        |s| s.starts_with("benchmarks/") && s.contains("/srt-slurm-recipes/"),
        "recipe files: the recipe dry-run, the matrix binder and SR4 load them again",
    ),
    (
        |s| s.starts_with("configs/srt-recipes/"),
        "lane blocks: the recipe dry-run and the matrix binder load them again",
    ),
    (
        |s| s.contains("golden_al_distribution/"),
        "golden acceptance curves: review's golden loader reads them again",
    ),
    (
        |s| s.contains("cookbook/"),
        "cookbook files: review's cookbook check reads them again",
    ),
    (
        |s| s.ends_with("perf-changelog.yaml"),
        "the changelog: its gate and its check each parse it",
    ),
];

#[test]
fn each_yaml_file_is_parsed_once_per_run() {
    let mut trees = vec![xtask::paths::workspace_root().join("inferencex-e2e")];
    match xtask::paths::corpus_dir() {
        Some(c) => trees.push(c.join("inferencex-aug2026")),
        None => {
            eprintln!("SKIP: no ../shared/corpus (INFX_CORPUS); the August tree is not counted")
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
        let mut not_yet = vec![0usize; NOT_YET.len()];
        for (rel, n) in counts.iter().filter(|(_, n)| **n > 1) {
            let s = rel.to_string_lossy();
            match NOT_YET.iter().position(|(matches, _)| matches(&s)) {
                Some(k) => not_yet[k] += 1,
                None => failures.push(format!(
                    "{}: {} parsed {n} times",
                    tree.display(),
                    rel.display()
                )),
            }
        }
        for ((_, who), n) in NOT_YET.iter().zip(not_yet).filter(|(_, n)| *n > 0) {
            eprintln!(
                "NOT YET: {}: {n} parsed more than once ({who})",
                tree.display()
            );
        }
    }
    assert!(
        failures.is_empty(),
        "files parsed more than once:\n{}",
        failures.join("\n")
    );
}
