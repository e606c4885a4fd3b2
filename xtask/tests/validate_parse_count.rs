//! One `validate --all` run parses each YAML file once: the documents the load step holds are
//! what the later checks read (docs/architecture.md). So does one `review check` run, which
//! loads through validate's load, one `review signoff` run of the bundled tree, and one
//! `review cookbook` run of the bundled tree and of a copy of it with a second cookbook file
//! (two compared configs share a lane block). Counted on the bundled tree and on the August and October corpus trees (skipped, visibly, when
//! ../shared is absent). The counter sits in infx-yaml's parse entry point; this binary holds a
//! single test, so no other run touches it.
//!
//! The readers that need a file again (config SR4, the matrix binder and node counts, the
//! recipe dry-run, review's golden curves and cookbooks) take it from the parsed documents
//! (`infx_yaml::DocIndex`); the changelog check parses only what was appended.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use xtask::cmd_review::{self, CheckArgs, CookbookArgs, ReviewCommand, SignoffArgs};
use xtask::output::Format;
use xtask::validate::{Options, validate};

/// Parses per file of one run of `run` on `tree`, keyed by the path relative to `tree` (readers
/// label a file by its absolute or its tree-relative path). Texts that are no file are labelled
/// in angle brackets (`<zip value>`: srtctl's re-read of one zip value, `<added lines>`: the
/// changelog gate's joined additions) and are not counted.
fn parses_of_one_run(tree: &Path, run: Run) -> BTreeMap<PathBuf, usize> {
    let tree = tree.canonicalize().expect("the tree exists");
    infx_yaml::parse_count::start();
    run(&tree);
    let counts = infx_yaml::parse_count::take();
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

/// One counted run over a tree.
type Run = fn(&Path);

fn validate_all(tree: &Path) {
    let report = validate(&Options {
        all: true,
        hermetic: true,
        ..Options::new(tree)
    });
    assert!(report.check("yaml").is_some(), "the run parsed the tree");
}

/// `validate --all` of a change against the committed tree (`--base HEAD`): the base side of
/// each changed file is parsed too, under its own name (`<base>/…`), never as the working
/// tree's file.
fn validate_all_against_head(tree: &Path) {
    let report = validate(&Options {
        all: true,
        hermetic: true,
        base: Some("HEAD".into()),
        ..Options::new(tree)
    });
    assert!(report.check("yaml").is_some(), "the run parsed the tree");
    assert!(
        report.check("changelog").is_some(),
        "the run read the change"
    );
}

/// The bundled tree committed in a throwaway repository, then a master config, runners.yaml, a
/// recipe and a lane block edited in the working tree (the change the impact reads both sides of).
fn with_changed_files() -> (tempfile::TempDir, PathBuf) {
    let repo = support::bundled_repo();
    let tree = repo.path().join("inferencex-e2e");
    support::edit(&tree, "configs/nvidia-master.yaml", |t| {
        t.replacen("conc-end: 64,", "conc-end: 128,", 1)
    });
    support::edit(&tree, "configs/runners.yaml", |t| {
        t.replacen(
            "    - b300-dsxe_03\n",
            "    - b300-dsxe_03\n    - b300-dsxe_04\n",
            1,
        )
    });
    support::edit(
        &tree,
        "benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/b300-fp4/fixed.yaml",
        |t| {
            t.replacen(
                "chunked-prefill-size: 16384",
                "chunked-prefill-size: 8192",
                1,
            )
        },
    );
    support::edit(
        &tree,
        "configs/srt-recipes/fixed-sequence-single.yaml",
        |t| format!("{t}# a comment: the block's text changed\n"),
    );
    (repo, tree)
}

/// `cargo xtask review check --root <tree> --format json`, in this process (the counter is),
/// without the CLI's confinement to one tree (the next run reads another).
fn review_check(tree: &Path) {
    let args = CheckArgs {
        root: Some(tree.to_path_buf()),
        base: None,
        pr: None,
        signer: None,
        member_of: Vec::new(),
        golden_mode: None,
        format: Format::Json,
        checklist: xtask::validate::Checklist::Auto,
    };
    let code = cmd_review::run(ReviewCommand::Check(args)).expect("review check runs");
    assert!(code == ExitCode::SUCCESS || code == ExitCode::from(1));
}

/// `cargo xtask review signoff --root <tree>`, in this process.
fn review_signoff(tree: &Path) {
    let args = SignoffArgs {
        root: Some(tree.to_path_buf()),
        base: None,
        run_artifacts: None,
        config_keys: Vec::new(),
        signer: None,
        member_of: Vec::new(),
    };
    let code = cmd_review::run(ReviewCommand::Signoff(args)).expect("review signoff runs");
    assert_eq!(code, ExitCode::SUCCESS);
}

/// `cargo xtask review cookbook --root <tree> --format json`, in this process: every config
/// with a cookbook file.
fn review_cookbook(tree: &Path) {
    let args = CookbookArgs {
        root: Some(tree.to_path_buf()),
        config_keys: Vec::new(),
        format: Format::Json,
    };
    let code = cmd_review::run(ReviewCommand::Cookbook(args)).expect("review cookbook runs");
    // Exit 1 is a difference found, not a failed run.
    assert!(code == ExitCode::SUCCESS || code == ExitCode::from(1));
}

/// A copy of the folder `from` at `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create a folder of the copy");
    for entry in std::fs::read_dir(from).expect("read the bundled tree") {
        let entry = entry.expect("read the bundled tree");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a file of the tree");
        }
    }
}

/// A copy of `tree` (outside git) whose recipe of two rows' configs does not parse: the
/// config rules, the binder and the dry-run that read it again must take the load's error,
/// not parse the file a second time.
fn with_a_broken_recipe(tree: &Path, into: &Path) -> PathBuf {
    let copied = into.join("inferencex-e2e");
    copy_tree(tree, &copied);
    support::edit(
        &copied,
        "benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/b300-fp4/fixed.yaml",
        |t| format!("{t}base: [unclosed\n"),
    );
    copied
}

/// A copy of `tree` with a second cookbook file, for a config whose rows use the same lane
/// block as the bundled cookbook's config: the run compares two configs. The commands need
/// not match (differences are findings, not a failed run).
fn with_second_cookbook(tree: &Path, into: &Path) -> PathBuf {
    let copied = into.join("inferencex-e2e");
    copy_tree(tree, &copied);
    let key = "qwen3.5-fp8-b300-sglang-agentic-hicache";
    std::fs::write(
        copied.join(format!("infx/cookbook/{key}.yaml")),
        format!(
            "config-key: {key}\nsource: {{page: a test's}}\ndeployments:\n  - name: Agg TP8\n    \
             worker: python3 -m sglang.launch_server --tensor-parallel-size 8\n    \
             points:\n      - {{conc: 1}}\n"
        ),
    )
    .expect("write the second cookbook file");
    copied
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
    let bundled = trees[0].clone();
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let broken_scratch = tempfile::tempdir().expect("a temporary folder");
    let broken = with_a_broken_recipe(&bundled, broken_scratch.path());
    let (_changed_repo, changed) = with_changed_files();
    // Cookbook reads no change, so no history is needed.
    let mut runs: Vec<(&str, PathBuf, Run)> = vec![
        ("review cookbook", bundled.clone(), review_cookbook),
        (
            "review cookbook (two configs)",
            with_second_cookbook(&bundled, scratch.path()),
            review_cookbook,
        ),
        (
            "validate --all --base HEAD (master, runners, recipe, lane block changed)",
            changed,
            validate_all_against_head,
        ),
        (
            "validate --all (a recipe that does not parse)",
            broken.clone(),
            validate_all,
        ),
        (
            "review check (a recipe that does not parse)",
            broken.clone(),
            review_check,
        ),
        (
            "review cookbook (a recipe that does not parse)",
            broken,
            review_cookbook,
        ),
    ];
    for tree in trees {
        runs.push(("validate --all", tree.clone(), validate_all));
        runs.push(("review check", tree, review_check));
    }
    match infx_git::Repo::discover(&bundled) {
        // The sign-off's stand-in change is the last commit of the changelog: full history.
        Ok(r) if !r.is_shallow() => {
            runs.push(("review signoff", bundled, review_signoff));
        }
        _ => eprintln!("SKIP: review signoff is not counted: no full git history"),
    }
    let mut failures = Vec::new();
    for (name, tree, run) in runs {
        let counts = parses_of_one_run(&tree, run);
        assert!(
            counts
                .keys()
                .any(|p| p == Path::new("configs/nvidia-master.yaml")),
            "{name} {}: the counter saw no master config: {counts:?}",
            tree.display()
        );
        for (rel, n) in counts.iter().filter(|(_, n)| **n > 1) {
            failures.push(format!(
                "{name} {}: {} parsed {n} times",
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
    base_run_parses_only_what_changed();
}

/// `validate` of the change (scoped, the base compared).
fn validate_change(tree: &Path) {
    let report = validate(&Options {
        hermetic: true,
        ..Options::new(tree)
    });
    assert!(report.baseline.is_some(), "the base was compared");
}

/// With a change, the base revision is validated too. Its run takes the head's parse of every
/// file the base has with the same bytes, and of the changed master config it parses only the
/// sections that changed (counted as one parse of that file; docs/baseline.md, "Cost").
fn base_run_parses_only_what_changed() {
    let (_repo, tree) = with_changed_files();
    let counts = parses_of_one_run(&tree, validate_change);
    let base: BTreeMap<String, usize> = counts
        .iter()
        .filter_map(|(p, n)| {
            let p = p.to_string_lossy();
            let at = p.find("/inferencex-e2e/")?;
            p.contains("infx-base-")
                .then(|| (p[at + "/inferencex-e2e/".len()..].to_string(), *n))
        })
        .collect();
    let changed = [
        "configs/nvidia-master.yaml",
        "configs/runners.yaml",
        "benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/b300-fp4/fixed.yaml",
        "configs/srt-recipes/fixed-sequence-single.yaml",
    ];
    assert!(
        base.keys().all(|p| changed.contains(&p.as_str())),
        "the base's run parsed a file it has unchanged: {base:?}"
    );
    assert!(
        base.contains_key("configs/nvidia-master.yaml") && base.values().all(|n| *n == 1),
        "the changed master config is parsed once at the base: {base:?}"
    );
}
