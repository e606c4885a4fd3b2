//! `review check`, `changelog plan` and `changelog replay` run the way a contributor first
//! tries them (issue 15, item 7): in a clone on a feature branch, with no --base/--head, the
//! change is found as validate finds it; review prints repository-relative paths; replay
//! follows the changelog where the tree keeps it (`inferencex-e2e/perf-changelog.yaml`).

use std::path::Path;
mod support;
use support::{copy_dir, git};

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");
const RECIPE: &str = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml";
const CHANGELOG: &str = "inferencex-e2e/perf-changelog.yaml";

/// The bundled tree committed on `main`, then a `feature` branch checked out.
fn clone_on_a_branch() -> tempfile::TempDir {
    let tmp = support::bundled_repo();
    git(tmp.path(), &["checkout", "-q", "-b", "feature"]);
    tmp
}

/// (exit code, stdout, stderr) of `cargo xtask <args>` standing in `dir`.
fn xtask_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = duct::cmd(XTASK, args)
        .dir(dir)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
        .expect("xtask runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Timings vary run to run.
fn without_timings(s: &str) -> String {
    s.lines()
        .map(|l| match l.find(" (load ") {
            Some(i) => format!("{}\n", &l[..i]),
            None => match (l.find(" in "), l.find(" s:")) {
                (Some(a), Some(b)) if a < b => format!("{}{}\n", &l[..a], &l[b + 2..]),
                _ => format!("{l}\n"),
            },
        })
        .collect()
}

#[test]
fn review_check_finds_the_change_and_prints_repository_paths() {
    let clone = clone_on_a_branch();
    let repo = clone.path();
    support::edit(repo, RECIPE, |t| {
        t.replacen(
            "        PYTHONUNBUFFERED: \"1\"\n",
            "        PYTHONUNBUFFERED: \"1\"\n        SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: \"1\"\n",
            1,
        )
    });
    // --signer needs the change: found without --base, as validate finds it.
    let (code, out, err) = xtask_in(repo, &["review", "check", "--signer", "@someone"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("error[review/codeowners-signer]"),
        "{out}{err}"
    );
    let locations: Vec<&str> = out
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--> "))
        .collect();
    assert!(!locations.is_empty(), "{out}");
    for l in &locations {
        assert!(
            l.starts_with("inferencex-e2e/") || l.starts_with(".github/"),
            "not repository-relative: {l}\n{out}"
        );
    }
    insta::assert_snapshot!(
        "review_check_default_base",
        format!("{out}{}", without_timings(&err))
    );
    // Outside git there is no change: the change-based checks are skipped, the rest runs.
    let loose = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &repo.join("inferencex-e2e"),
        &loose.path().join("inferencex-e2e"),
    );
    let (code, out, err) = xtask_in(
        loose.path(),
        &["review", "check", "--root", "inferencex-e2e"],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("error[review/draft-precision-env]") && !out.contains("codeowners"),
        "{out}"
    );
}

/// Appends an entry re-running dsr1-fp4-b300-sglang and commits it.
fn append_a_rerun_entry(repo: &Path) {
    support::edit(repo, CHANGELOG, |t| {
        format!(
            "{t}\n- config-keys:\n    - dsr1-fp4-b300-sglang\n  description:\n    - Re-run on the same image\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n"
        )
    });
    git(repo, &["commit", "-q", "-am", "changelog: re-run dsr1"]);
}

/// On a clean clone (nothing since the base) `changelog plan` plans the last commit that
/// changed the changelog, as validate does, instead of exiting 1 with "No additions found"
/// (issue 43, item 7).
#[test]
fn changelog_plan_on_a_clean_clone_plans_the_last_changelog_commit() {
    let tmp = support::bundled_repo();
    let repo = tmp.path();
    append_a_rerun_entry(repo);
    let (code, plan, err) = xtask_in(repo, &["changelog", "plan"]);
    assert_eq!(code, 0, "{err}");
    assert!(plan.contains("dsr1-fp4-b300-sglang"), "{plan}");
}

#[test]
fn changelog_plan_and_replay_default_as_validate() {
    let clone = clone_on_a_branch();
    let repo = clone.path();
    append_a_rerun_entry(repo);
    // No --base / --head: the merge-base with main, and HEAD.
    let (code, plan, err) = xtask_in(repo, &["changelog", "plan"]);
    assert_eq!(code, 0, "{err}");
    let (code, explicit, err) = xtask_in(
        repo,
        &["changelog", "plan", "--base", "main", "--head", "HEAD"],
    );
    assert_eq!(code, 0, "{err}");
    let json = |s: &str| -> serde_json::Value { serde_json::from_str(s).expect("plan JSON") };
    let (mut plan_json, mut explicit_json) = (json(&plan), json(&explicit));
    // The base is labelled as given: `main` there, the merge-base commit here.
    let merge_base = git(repo, &["merge-base", "main", "HEAD"]);
    assert_eq!(
        plan_json["changelog_metadata"]["base_ref"],
        merge_base.as_str()
    );
    plan_json["changelog_metadata"]["base_ref"] = serde_json::Value::Null;
    explicit_json["changelog_metadata"]["base_ref"] = serde_json::Value::Null;
    assert_eq!(plan_json, explicit_json);
    assert!(plan.contains("dsr1-fp4-b300-sglang"), "{plan}");
    // Replay follows inferencex-e2e/perf-changelog.yaml: both commits that touched it.
    let (code, out, err) = xtask_in(repo, &["changelog", "replay"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("replayed 2 commits of inferencex-e2e/perf-changelog.yaml"),
        "{out}"
    );
    insta::assert_snapshot!("changelog_replay_nested_tree", without_timings(&out));
}

/// Every command of README.md's Commands table, as this test runs it (issue 43, item 7): the
/// table's first cell (backticks dropped, `\|` read as `|`), then each run that covers it — the
/// arguments after `cargo xtask` and the exit code README documents for that run (0 clean, 1
/// findings or failure, 2 usage error). A template (`KEY`, `FILE`, `a|b`) is run with real
/// values, every alternative of `a|b` once. `{scratch}` is a folder outside the clone for the
/// files a run writes or reads. A README command missing here fails the test, so a command
/// added to README is run from then on.
const README_TABLE: &[(&str, &[(&str, i32)])] = &[
    ("cargo xtask validate", &[("validate", 0)]),
    (
        "cargo xtask matrix full-sweep … / test-config …",
        &[
            ("matrix full-sweep", 0),
            ("matrix test-config --config-keys dsr1-fp4-b300-sglang", 0),
        ],
    ),
    (
        "cargo xtask dry-run --config-key KEY [--conc N…] [--point …]",
        &[(
            "dry-run --config-key dsv41flash-fp4-b300-sglang-agentic-dspark --conc 4",
            0,
        )],
    ),
    (
        "cargo xtask dry-run FILE[:SELECTOR]…",
        &[(
            "dry-run inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml:override_tp2_c4",
            0,
        )],
    ),
    (
        "cargo xtask changelog check|plan|merge-driver|replay …",
        &[
            ("changelog check", 0),
            ("changelog plan", 0),
            (
                "changelog merge-driver {scratch}/base.yaml {scratch}/ours.yaml {scratch}/theirs.yaml",
                0,
            ),
            ("changelog replay", 0),
        ],
    ),
    (
        "cargo xtask install-merge-driver",
        &[("install-merge-driver", 0)],
    ),
    (
        "cargo xtask pin [--only REF|KEY…] [--refresh] [--check] [PATHS…]",
        // Every reference is pinned: nothing to do, no registry asked. `--check` asks the
        // registries, which a hermetic run refuses: a failure, exit 1.
        &[("pin", 0), ("pin --check", 1)],
    ),
    ("cargo xtask diff-check", &[("diff-check", 0)]),
    (
        "cargo xtask review check|owners|pareto|cookbook|signoff …",
        &[
            ("review check", 0),
            ("review owners", 0),
            (
                "review pareto crates/review/tests/fixtures/pareto_seed_shape.json --plot {scratch}/frontier.svg",
                0,
            ),
            // Results with no point to draw: an empty chart that says so (advisory).
            (
                "review pareto {scratch}/no-points.json --plot {scratch}/empty.svg",
                0,
            ),
            // No result file at all: the files are required, a usage error.
            ("review pareto --plot {scratch}/none.svg", 2),
            ("review cookbook", 0),
            ("review signoff", 0),
        ],
    ),
    (
        "cargo xtask conformance [validation|recipes|matrix|changelog|yaml|real-prs]",
        // A fresh clone has no ../shared: each says SKIP and passes.
        &[("conformance validation", 0), ("conformance real-prs", 0)],
    ),
    (
        "cargo xtask test",
        // The suite this test is part of: only its help here (no recursion).
        &[("test --help", 0)],
    ),
    (
        "cargo xtask fuzz [--seconds N] [--smoke]",
        // Needs rustup's nightly and g++ (README): the scheduled workflow runs it.
        &[("fuzz --help", 0)],
    ),
    (
        "cargo xtask codes [--check]",
        &[("codes", 0), ("codes --check", 0)],
    ),
];

/// The config the "Before you open a PR" commands are run with (`<your-config>`).
const YOUR_CONFIG: &str = "dsr1-fp4-b300-sglang";

/// The first cells of README.md's Commands table, as [`README_TABLE`] keys them.
fn readme_table_commands(readme: &str) -> Vec<String> {
    let section = readme
        .split("\n## Commands\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("README.md has a Commands section");
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `cargo xtask"))
        .map(|l| {
            let cell = l.split(" | ").next().unwrap_or(l);
            format!("`cargo xtask{cell}")
                .replace("\\|", "|")
                .replace('`', "")
        })
        .collect()
}

/// The commands of README.md's "Before you open a PR" block, as written (comments dropped).
fn readme_pr_commands(readme: &str) -> Vec<String> {
    let section = readme
        .split("\n## Before you open a PR\n")
        .nth(1)
        .expect("README.md has a Before you open a PR section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("the section has a sh block");
    block
        .lines()
        .map(|l| l.split(" #").next().unwrap_or(l).trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Runs every command of README.md's Commands table and "Before you open a PR" block from the
/// root of a fresh clone of this repository, with a copied `xtask` binary (README: a copied
/// binary validates the clone it is run in), and checks each exits as README documents.
#[test]
fn every_readme_command_runs_as_documented() {
    let ws = xtask::paths::workspace_root();
    let readme = std::fs::read_to_string(ws.join("README.md")).expect("README.md");
    // Every table command is covered here, and nothing here is stale.
    let table = readme_table_commands(&readme);
    let covered: Vec<&str> = README_TABLE.iter().map(|(c, _)| *c).collect();
    for c in &table {
        assert!(
            covered.contains(&c.as_str()),
            "README.md's Commands table has `{c}`, which this test does not run: add it to README_TABLE"
        );
    }
    for c in &covered {
        assert!(
            table.iter().any(|t| t == c),
            "README_TABLE has `{c}`, which README.md's Commands table no longer lists"
        );
    }
    let shallow = duct::cmd("git", ["rev-parse", "--is-shallow-repository"])
        .dir(&ws)
        .stdout_capture()
        .stderr_null()
        .unchecked()
        .read()
        .unwrap_or_default();
    if shallow.trim() != "false" {
        eprintln!("SKIP: every_readme_command_runs_as_documented: no full git history to clone");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let clone = tmp.path().join("clone");
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir_all(&scratch).expect("mkdir");
    support::git(
        tmp.path(),
        &["clone", "-q", &ws.display().to_string(), "clone"],
    );
    // A fresh clone of main at this commit: `origin/main` is HEAD, nothing changed.
    git(&clone, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    let bin = scratch.join("xtask");
    std::fs::copy(XTASK, &bin).expect("copy the xtask binary");
    // `test` and `conformance` are handed to the `xtask-dev` binary (README, "What builds
    // when"): copied beside, the copy runs them without cargo, so no cargo starts inside this
    // test run. Built beside `xtask` with the workspace (`cargo xtask test`).
    let dev = Path::new(XTASK).with_file_name(format!("xtask-dev{}", std::env::consts::EXE_SUFFIX));
    let has_dev = dev.is_file();
    if has_dev {
        std::fs::copy(&dev, scratch.join(dev.file_name().expect("a file name")))
            .expect("copy the xtask-dev binary");
    } else {
        let why = "every_readme_command_runs_as_documented: test and conformance: no xtask-dev binary beside xtask (cargo build -p xtask-dev)";
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("SKIP: {why}");
    }
    // The files the runs read: results with no drawable point, a three-way changelog merge.
    std::fs::write(
        scratch.join("no-points.json"),
        // A run that failed: no latency, no throughput.
        r#"[{"infmax_model_prefix": "dsv41flash", "hw": "b300", "framework": "sglang", "precision": "fp4", "tp": 4, "ep": 1, "dp_attention": false, "conc": 1, "request_metrics": {"latency": {"e2el": {"p90": 0, "p75": 0}}, "throughput": {"per_gpu": {"total_tput_tps": 0}}}}]"#,
    )
    .expect("write");
    let changelog = std::fs::read_to_string(clone.join(CHANGELOG)).expect("changelog");
    let entry = |key: &str| {
        format!(
            "\n- config-keys:\n    - {key}\n  description:\n    - Re-run\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n"
        )
    };
    for (name, text) in [
        ("base.yaml", changelog.clone()),
        ("ours.yaml", format!("{changelog}{}", entry(YOUR_CONFIG))),
        (
            "theirs.yaml",
            format!(
                "{changelog}{}",
                entry("qwen3.5-fp8-b300-sglang-agentic-hicache")
            ),
        ),
    ] {
        std::fs::write(scratch.join(name), text).expect("write");
    }
    let run = |line: &str| -> (i32, String) {
        let line = line.replace("{scratch}", &scratch.display().to_string());
        let args: Vec<&str> = line.split_whitespace().collect();
        let out = duct::cmd(&bin, &args)
            .dir(&clone)
            .env("HOME", &scratch)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("NO_COLOR", "1")
            .env("INFX_HERMETIC", "1")
            .env_remove("CARGO")
            .env_remove("CI")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("INFX_CORPUS")
            .stdout_capture()
            .stderr_capture()
            .unchecked()
            .run()
            .expect("xtask runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), text)
    };
    let mut failures = Vec::new();
    let mut outputs = std::collections::HashMap::new();
    let mut check = |line: &str, want: i32| {
        let (code, text) = run(line);
        if code != want {
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            failures.push(format!(
                "`cargo xtask {line}` exited {code}, README documents {want}:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
        outputs.insert(line.to_string(), text);
    };
    for (_, runs) in README_TABLE {
        for (line, want) in *runs {
            let developer = line.starts_with("test ") || line.starts_with("conformance ");
            if developer && !has_dev {
                continue;
            }
            check(line, *want);
        }
    }
    let pr = readme_pr_commands(&readme);
    assert!(pr.len() >= 4, "{pr:?}");
    for line in &pr {
        let args = line
            .strip_prefix("cargo xtask ")
            .unwrap_or_else(|| panic!("not a cargo xtask command: {line}"))
            .replace("<your-config>", YOUR_CONFIG);
        check(&args, 0);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // What a person sees when the results hold no point to draw.
    let empty_run = "review pareto {scratch}/no-points.json --plot {scratch}/empty.svg";
    insta::assert_snapshot!(
        "review_pareto_plot_no_points",
        outputs[empty_run].replace(&scratch.display().to_string(), "<scratch>")
    );
    // The copied binary checks the clone's docs, not the checkout it was built in: a code row
    // dropped from the clone's README is drift.
    support::edit(&clone, "README.md", |t| {
        t.replacen(
            "| `validate/truncated` | note |",
            "| `validate/truncated-renamed` | note |",
            1,
        )
    });
    let (code, text) = run("codes --check");
    assert_eq!(code, 1, "{text}");
    // The charts were written, the empty one saying why.
    let empty = std::fs::read_to_string(scratch.join("empty.svg")).expect("empty.svg");
    assert!(empty.contains("no point with a positive"), "{empty}");
    assert!(scratch.join("frontier.svg").is_file());
}
