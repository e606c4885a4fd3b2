//! Hostile input, round two (issue #42; docs/security.md): each test plants one attack in a
//! throwaway clone of the bundled tree and runs the real `xtask` binary with a deadline.

use std::io::Read as _;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
mod support;
use support::{copy_dir, git};

const TREE: &str = "inferencex-e2e";
const MASTER: &str = "inferencex-e2e/configs/nvidia-master.yaml";
const CHANGELOG: &str = "inferencex-e2e/perf-changelog.yaml";

struct Run {
    code: Option<i32>,
    out: String,
    err: String,
}

impl Run {
    fn all(&self) -> String {
        format!("{}\n{}", self.out, self.err)
    }
}

/// Runs `cmd`, killing it after `limit` (a hang is a failure, not a stuck test).
fn run_with_deadline(mut cmd: Command, limit: Duration) -> Run {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("xtask starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stdout.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let err_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stderr.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("xtask {cmd:?} still running after {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code(),
        out: out_t.join().unwrap_or_default(),
        err: err_t.join().unwrap_or_default(),
    }
}

fn xtask_in(dir: &Path, args: &[&str]) -> Run {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xtask"));
    c.current_dir(dir)
        .env("INFX_HERMETIC", "1")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_EVENT_PATH")
        .args(args);
    run_with_deadline(c, Duration::from_secs(60))
}

/// A fork's clone: `origin/main` holds the bundled tree; the branch `change` starts there.
fn fork() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = tmp.path().join("upstream");
    let ws = xtask::paths::workspace_root();
    copy_dir(&ws.join(TREE), &upstream.join(TREE));
    copy_dir(&ws.join(".github"), &upstream.join(".github"));
    let ident = [
        ("user.email", "dev@example.com"),
        ("user.name", "Dev"),
        ("core.autocrlf", "false"),
    ];
    git(&upstream, &["init", "-q", "-b", "main"]);
    for (k, v) in ident {
        git(&upstream, &["config", k, v]);
    }
    git(&upstream, &["add", "-A"]);
    git(&upstream, &["commit", "-q", "-m", "the bundled tree"]);
    let repo = tmp.path().join("fork");
    let (up, fork) = (upstream.to_str().unwrap(), repo.to_str().unwrap());
    git(tmp.path(), &["clone", "-q", up, fork]);
    for (k, v) in ident {
        git(&repo, &["config", k, v]);
    }
    git(&repo, &["checkout", "-q", "-b", "change"]);
    (tmp, repo)
}

/// The arguments of the PR job's `cargo xtask validate` step in .github/workflows/validate.yml,
/// read from the workflow (so the test follows it), with the base and the event filled in.
fn workflow_validate_args(base_ref: &str, event: &Path) -> Vec<String> {
    let wf = xtask::paths::workspace_root().join(".github/workflows/validate.yml");
    let text = std::fs::read_to_string(&wf).expect("validate.yml");
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| {
            l.starts_with("run: nix develop --command cargo xtask validate")
                && l.contains("--format github")
        })
        .expect("the validate step in validate.yml");
    let cmd = line
        .trim_start_matches("run: nix develop --command cargo xtask ")
        .replace("${BASE_REF}", base_ref)
        .replace("${GITHUB_EVENT_PATH}", event.to_str().unwrap());
    cmd.split_whitespace()
        .map(|w| w.trim_matches('"').to_string())
        .collect()
}

/// A `pull_request` event with one primary sweep label, for the head commit of `repo`.
fn write_event(repo: &Path) -> PathBuf {
    let head = git(repo, &["rev-parse", "HEAD"]);
    let p = repo.parent().unwrap().join("event.json");
    std::fs::write(
        &p,
        format!(
            r#"{{"action":"synchronize","number":42,"pull_request":{{"number":42,"labels":[{{"name":"full-sweep-enabled"}}],"head":{{"sha":"{head}"}}}}}}"#
        ),
    )
    .unwrap();
    p
}

/// The issue's recipe: a config change that needs an entry, and the changelog made to vanish
/// by `plant`; then the exact CI command.
fn changelog_bypass(plant: impl FnOnce(&Path)) -> Run {
    let (_tmp, repo) = fork();
    let master = repo.join(MASTER);
    let text = std::fs::read_to_string(&master).unwrap();
    let edited = text.replacen("conc-end: 64", "conc-end: 128", 1);
    assert_ne!(text, edited);
    std::fs::write(&master, edited).unwrap();
    plant(&repo);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "x"]);
    let event = write_event(&repo);
    let args = workflow_validate_args("main", &event);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(args[..3], ["validate", "--base", "origin/main"], "{args:?}");
    xtask_in(&repo, &args)
}

fn assert_changelog_missing(r: &Run, what: &str) {
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.out
            .contains("title=changelog/missing::perf-changelog.yaml ")
            && r.out.contains(what),
        "{}",
        r.all()
    );
    assert!(!r.all().contains("changelog skipped"), "{}", r.all());
}

#[test]
fn item1_deleting_the_changelog_fails_the_ci_command() {
    let r = changelog_bypass(|repo| {
        git(repo, &["rm", "-q", CHANGELOG]);
    });
    assert_changelog_missing(&r, "was deleted");
    // Coverage still runs: the changed config has no entry.
    assert!(
        r.out.contains("title=changelog/entry-required::"),
        "{}",
        r.all()
    );
}

#[test]
fn item1_a_changelog_replaced_by_a_device_link_or_a_folder_fails() {
    let r = changelog_bypass(|repo| {
        std::fs::remove_file(repo.join(CHANGELOG)).unwrap();
        symlink("/dev/zero", repo.join(CHANGELOG)).unwrap();
    });
    assert_changelog_missing(&r, "replaced by a symlink");
    let r = changelog_bypass(|repo| {
        std::fs::remove_file(repo.join(CHANGELOG)).unwrap();
        std::fs::create_dir(repo.join(CHANGELOG)).unwrap();
        std::fs::write(repo.join(CHANGELOG).join("x.yaml"), "- a: 1\n").unwrap();
    });
    assert_changelog_missing(&r, "a directory");
}

/// A valid entry for the config the issue's edit changes (`conc-end: 64` → 128 in the first
/// entry that has it).
fn entry_for_the_edit() -> String {
    let ws = xtask::paths::workspace_root();
    let master = std::fs::read_to_string(ws.join(MASTER)).unwrap();
    let at = master.find("conc-end: 64").unwrap();
    let key = master[..at]
        .lines()
        .rfind(|l| !l.starts_with([' ', '#']) && l.ends_with(':'))
        .unwrap()
        .trim_end_matches(':')
        .to_string();
    format!(
        "\n- config-keys:\n    - {key}\n  description:\n    - \"Raise conc-end to 128\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/42\n"
    )
}

fn edit_master(repo: &Path) {
    let master = repo.join(MASTER);
    let text = std::fs::read_to_string(&master).unwrap();
    std::fs::write(&master, text.replacen("conc-end: 64", "conc-end: 128", 1)).unwrap();
}

#[test]
fn item2_a_proper_entry_passes_the_ci_command() {
    // The control for the next test: the same change with the entry in the tree passes.
    let (_tmp, repo) = fork();
    edit_master(&repo);
    let log = repo.join(CHANGELOG);
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, text + &entry_for_the_edit()).unwrap();
    git(&repo, &["commit", "-q", "-am", "x"]);
    let event = write_event(&repo);
    let args = workflow_validate_args("main", &event);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = xtask_in(&repo, &args);
    assert_eq!(r.code, Some(0), "{}", r.all());
}

#[test]
fn item2_a_changelog_linked_outside_is_not_read_and_does_not_decide() {
    let (tmp, repo) = fork();
    edit_master(&repo);
    // Outside the repository: the base's changelog with a proper entry for the change.
    let outside = tmp.path().join("perf-changelog.yaml");
    let text = std::fs::read_to_string(repo.join(CHANGELOG)).unwrap();
    std::fs::write(&outside, text + &entry_for_the_edit()).unwrap();
    std::fs::remove_file(repo.join(CHANGELOG)).unwrap();
    symlink(&outside, repo.join(CHANGELOG)).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "x"]);
    let event = write_event(&repo);
    let args = workflow_validate_args("main", &event);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = xtask_in(&repo, &args);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.out.contains("title=changelog/missing::") && r.out.contains("outside the repository"),
        "{}",
        r.all()
    );
}

/// Change detection (validate in git mode) on a changed recipe the work tree turned into
/// `plant`: must end quickly with a finding, never read the target.
fn recipe_replaced(plant: impl FnOnce(&Path), commit: bool) -> Run {
    let (_tmp, repo) = fork();
    let recipe = repo.join(RECIPE);
    std::fs::remove_file(&recipe).unwrap();
    plant(&recipe);
    if commit {
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "x"]);
    }
    xtask_in(
        &repo,
        &["validate", "--base", "origin/main", "--format", "github"],
    )
}

const RECIPE: &str = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml";

#[test]
fn item2_change_detection_never_reads_a_device_link_a_fifo_or_outside() {
    // /dev/zero: read without bound before (the run never ended).
    let r = recipe_replaced(|p| symlink("/dev/zero", p).unwrap(), true);
    assert_eq!(r.code, Some(1), "{}", r.all());
    // A FIFO in the work tree: `open` blocked forever before.
    let r = recipe_replaced(
        |p| {
            let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
            assert!(ok);
        },
        false,
    );
    assert_eq!(r.code, Some(1), "{}", r.all());
    // A file outside: refused by name, its content never printed.
    let secret = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(secret.path(), "name: infx-outside-secret-91c2\n").unwrap();
    let r = recipe_replaced(|p| symlink(secret.path(), p).unwrap(), true);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(!r.all().contains("infx-outside-secret-91c2"), "{}", r.all());
}

/// `dry-run PATH` through a folder link in the middle of PATH (`benchmarks/e -> outside`):
/// the root is the repository around the path as given, so the link is refused, its target's
/// content never printed. `in_git`: the tree is a clone (else a plain copy).
fn dry_run_through_a_folder_link(in_git: bool) -> Run {
    let (tmp, repo) = fork();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(
        outside.join("shadow"),
        "root:infx-outside-secret-5d1e:20228:0:99999:7:::\n",
    )
    .unwrap();
    let tree = if in_git {
        repo.join(TREE)
    } else {
        let copy = tmp.path().join("copy");
        copy_dir(&repo.join(TREE), &copy);
        copy
    };
    symlink(&outside, tree.join("benchmarks/e")).unwrap();
    let r = xtask_in(&tree, &["dry-run", "--tree", ".", "benchmarks/e/shadow"]);
    assert!(
        !r.all().contains("infx-outside-secret-5d1e"),
        "the target was read and printed:\n{}",
        r.all()
    );
    r
}

#[test]
fn item3_dry_run_never_follows_a_folder_link_in_the_middle_of_path_out() {
    for in_git in [true, false] {
        let r = dry_run_through_a_folder_link(in_git);
        assert_ne!(r.code, Some(0), "{}", r.all());
        assert!(
            r.all()
                .contains("benchmarks/e is a symlink that leads outside the repository"),
            "{}",
            r.all()
        );
    }
}

/// Characters that must never reach the output raw (docs/security.md, "Output").
const SPOOFS: [char; 4] = ['\u{1b}', '\u{202e}', '\u{2067}', '\u{9b}'];

fn assert_no_spoof(what: &str, out: &str) {
    for c in SPOOFS {
        assert!(!out.contains(c), "{what}: raw {c:?} in\n{out}");
    }
}

#[test]
fn item6_bidi_c1_and_esc_from_a_file_name_or_content_are_escaped_in_every_format() {
    let (tmp, _repo) = fork();
    let tree = tmp.path().join("copy");
    copy_dir(&xtask::paths::workspace_root().join(TREE), &tree);
    // A broken YAML file whose name carries ESC and bidi controls, whose text a C1 control.
    let name = "x\u{1b}[31m\u{202e}lmay\u{2067}.yaml";
    std::fs::write(
        tree.join("configs/srt-recipes").join(name),
        "a: [\u{9b}31m\u{202e}\n",
    )
    .unwrap();
    let t = tree.to_str().unwrap();
    for format in ["human", "github", "json", "sarif"] {
        let r = xtask_in(
            tmp.path(),
            &[
                "validate",
                "--root",
                t,
                "--all",
                "--hermetic",
                "--format",
                format,
            ],
        );
        assert_eq!(r.code, Some(1), "{format}: {}", r.all());
        assert_no_spoof(format, &r.all());
    }
}

#[test]
fn item6_a_newline_in_a_recipe_name_stays_in_the_dry_run_header() {
    let (tmp, _repo) = fork();
    let tree = tmp.path().join("copy");
    copy_dir(&xtask::paths::workspace_root().join(TREE), &tree);
    let rel = "benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/b300-fp4/fixed.yaml";
    let p = tree.join(rel);
    let text = std::fs::read_to_string(&p).unwrap();
    let forged = text.replacen(
        "name: dsr1-fp4-b300-sglang",
        "name: \"dsr1\\nsrun --forged-line \\u202e\\u009b\"",
        1,
    );
    assert_ne!(text, forged);
    std::fs::write(&p, forged).unwrap();
    let r = xtask_in(&tree, &["dry-run", "--tree", ".", rel]);
    assert!(r.out.contains("# dsr1\\nsrun --forged-line"), "{}", r.all());
    assert!(
        !r.out.lines().any(|l| l.starts_with("srun --forged-line")),
        "{}",
        r.all()
    );
    assert_no_spoof("dry-run", &r.all());
    let r = xtask_in(&tree, &["dry-run", "--tree", ".", "--format", "json", rel]);
    assert_no_spoof("dry-run json", &r.all());
}

#[test]
fn item8_a_crlf_checkout_under_autocrlf_scopes_the_change_as_git_sees_it() {
    let (_tmp, repo) = fork();
    // `* text=auto` on both sides, then a checkout with CRLF line endings.
    std::fs::write(repo.join(".gitattributes"), "* text=auto\n").unwrap();
    git(&repo, &["add", ".gitattributes"]);
    git(&repo, &["commit", "-q", "-m", "attributes"]);
    let base = git(&repo, &["rev-parse", "HEAD"]);
    git(&repo, &["config", "core.autocrlf", "true"]);
    std::fs::remove_dir_all(repo.join(TREE)).unwrap();
    git(&repo, &["checkout", "-q", "--", "."]);
    let master = repo.join(MASTER);
    let bytes = std::fs::read(&master).unwrap();
    assert!(
        bytes.windows(2).any(|w| w == b"\r\n"),
        "not a CRLF checkout"
    );
    let text = String::from_utf8(bytes).unwrap();
    std::fs::write(&master, text.replacen("conc-end: 64", "conc-end: 128", 1)).unwrap();
    let log = repo.join(CHANGELOG);
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(&entry_for_the_edit().replace('\n', "\r\n"));
    std::fs::write(&log, text).unwrap();
    let r = xtask_in(
        &repo,
        &[
            "validate",
            "--base",
            &base,
            "--labels",
            "full-sweep-enabled",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.all());
    // Only the edited config is in scope, as on an LF checkout (the raw CRLF text made every
    // entry of the master look touched: "matrix ok [4 configs]").
    let matrix = r
        .all()
        .lines()
        .find(|l| l.starts_with("matrix "))
        .map(str::to_string)
        .unwrap_or_default();
    assert!(matrix.ends_with("[dsr1-fp4-b300-sglang]"), "{}", r.all());
}

#[test]
fn item8_a_corrupt_pack_is_named_not_a_missing_branch() {
    let (_tmp, repo) = fork();
    git(&repo, &["repack", "-adq"]);
    let infx = repo.join(TREE).join("infx.yaml");
    let text = std::fs::read_to_string(&infx).unwrap();
    std::fs::write(&infx, text + "# x\n").unwrap();
    git(&repo, &["commit", "-q", "-am", "x"]);
    // Every object of the pack (origin/main's commit among them) unreadable; the new head
    // commit is loose and reads.
    let packs = repo.join(".git/objects/pack");
    for e in std::fs::read_dir(&packs).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "pack") {
            let mut perms = std::fs::metadata(&p).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&p, perms).unwrap();
            let mut b = std::fs::read(&p).unwrap();
            let n = b.len();
            b[12..n - 20].fill(0);
            std::fs::write(&p, b).unwrap();
        }
    }
    for args in [
        &["validate"][..],
        &["validate", "--base", "origin/main"][..],
    ] {
        let r = xtask_in(&repo, args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.all());
        assert!(
            r.all()
                .contains("error[git/object]: `origin/main` names commit"),
            "{args:?}: {}",
            r.all()
        );
        assert!(
            !r.all().contains("none of the upstream branches") && !r.all().contains("not found"),
            "{args:?}: {}",
            r.all()
        );
    }
}

#[test]
fn item8_review_check_fails_a_sparse_checkout_without_benchmarks() {
    let (_tmp, repo) = fork();
    git(
        &repo,
        &[
            "sparse-checkout",
            "set",
            "--no-cone",
            "/*",
            "!/inferencex-e2e/benchmarks/",
        ],
    );
    assert!(!repo.join(TREE).join("benchmarks").exists());
    for args in [&["review", "check"][..], &["validate"][..]] {
        let r = xtask_in(&repo, args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.all());
        assert!(
            r.all()
                .contains("error[git/sparse-checkout]: inferencex-e2e/benchmarks/ is left out of this sparse checkout"),
            "{args:?}: {}",
            r.all()
        );
    }
}

/// `validate --online` without the hermetic guard (only loopback overrides are contacted).
fn validate_online(repo: &Path, overrides: &[&str]) -> Run {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xtask"));
    c.current_dir(repo)
        .env_remove("INFX_HERMETIC")
        .env_remove("NIX_BUILD_TOP")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_EVENT_PATH")
        .args(["validate", "--all", "--online"]);
    for o in overrides {
        c.args(["--registry-override", o]);
    }
    run_with_deadline(c, Duration::from_secs(60))
}

#[test]
fn item8_validate_online_takes_registry_overrides_validated_as_pin_does() {
    let (_tmp, repo) = fork();
    for (bad, why) in [
        ("=http://127.0.0.1:9", "NAME must be a registry host name"),
        ("docker.io=http://127.0.0.1:0", "from 1 to 65535"),
        ("docker.io=http://127.0.0.1:9/?q=1", "query"),
        ("docker.io=http://127.0.0.1:9#f", "fragment"),
        ("docker.io=ftp://127.0.0.1:9", "http:// or https://"),
    ] {
        let r = validate_online(&repo, &[bad]);
        assert_eq!(r.code, Some(2), "{bad}: {}", r.all());
        assert!(r.err.contains(why), "{bad}: {}", r.all());
    }
    // Used: every reference of the tree is on docker.io, served by a closed loopback port.
    let r = validate_online(&repo, &["docker.io=http://127.0.0.1:9"]);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.out
            .contains("http://127.0.0.1:9/v2/lmsysorg/sglang/manifests/"),
        "{}",
        r.all()
    );
}

/// A plain copy of the bundled tree, with `edit` applied (no git: the whole tree is judged).
fn edited_copy(edit: impl FnOnce(&Path)) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    copy_dir(&xtask::paths::workspace_root().join(TREE), &tree);
    edit(&tree);
    (tmp, tree)
}

const AMD: &str = "configs/amd-master.yaml";
const SMALL_LIST: &str = "conc-list: [4, 8, 16, 32]";

fn conc_list(n: usize) -> String {
    let values: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    format!("conc-list: [{}]", values.join(", "))
}

#[test]
fn item4_sweep_points_per_config_and_per_run_have_a_budget() {
    // One config of 10,001 points (the budget is 10,000 per config).
    let (_tmp, tree) = edited_copy(|t| {
        let p = t.join(AMD);
        let s = std::fs::read_to_string(&p).unwrap();
        assert!(s.contains(SMALL_LIST));
        std::fs::write(&p, s.replacen(SMALL_LIST, &conc_list(10_001), 1)).unwrap();
    });
    let r = xtask_in(
        &tree,
        &[
            "matrix",
            "full-sweep",
            "--root",
            ".",
            "--no-evals",
            "--format",
            "json",
        ],
    );
    assert_eq!(r.code, Some(1), "{}", r.err);
    assert!(
        r.err.contains("error[matrix/too-many-points]: master config 'dsv41flash-fp4-mi355x-sglang' expands into more than 10000 sweep points"),
        "{}",
        r.err
    );
    // Eleven configs of 9,100 points each: every config within its budget, the run not.
    let (_tmp, tree) = edited_copy(|t| {
        let p = t.join(AMD);
        let s = std::fs::read_to_string(&p).unwrap();
        let start = s.find("dsv41flash-fp4-mi355x-sglang:").unwrap();
        let end = s[start..].find(SMALL_LIST).unwrap() + start;
        let end = end + s[end..].find('\n').unwrap() + 1;
        let block = &s[start..end];
        let mut out = s.clone();
        for k in 0..11 {
            out.push('\n');
            out.push_str(
                &block
                    .replacen(
                        "dsv41flash-fp4-mi355x-sglang:",
                        &format!("budget{k}-fp4-mi355x-sglang:"),
                        1,
                    )
                    .replacen(SMALL_LIST, &conc_list(9_100), 1),
            );
        }
        std::fs::write(&p, out).unwrap();
    });
    let r = xtask_in(
        &tree,
        &[
            "matrix",
            "full-sweep",
            "--root",
            ".",
            "--no-evals",
            "--format",
            "json",
        ],
    );
    assert_eq!(r.code, Some(1), "{}", r.err);
    assert!(
        r.err.contains(
            "error[matrix/too-many-points]: this run expands into more than 100000 sweep points"
        ),
        "{}",
        r.err
    );
}

#[test]
fn item4_variants_per_recipe_have_a_budget() {
    let rel = "benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/b300-fp4/fixed.yaml";
    let (_tmp, tree) = edited_copy(|t| {
        let p = t.join(rel);
        let mut s = std::fs::read_to_string(&p).unwrap();
        for i in 0..1_001 {
            s.push_str(&format!(
                "override_budget{i}:\n  resources:\n    gpus_per_node: 8\n"
            ));
        }
        std::fs::write(&p, s).unwrap();
    });
    let r = xtask_in(&tree, &["dry-run", "--tree", ".", "--quiet", rel]);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.out
            .contains("error[recipe/too-many-variants]: the recipe has 1003 variants"),
        "{}",
        r.all()
    );
}

#[test]
fn item4_appended_entries_per_change_have_a_budget() {
    let (_tmp, repo) = fork();
    let log = repo.join(CHANGELOG);
    let mut text = std::fs::read_to_string(&log).unwrap();
    for _ in 0..2_001 {
        text.push_str(&entry_for_the_edit());
    }
    std::fs::write(&log, text).unwrap();
    let r = xtask_in(&repo, &["validate", "--base", "origin/main"]);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.out.contains(
            "error[changelog/too-many-entries]: the change appends 2001 entries; at most 2000"
        ),
        "{}",
        r.all()
    );
    // One finding, not one per entry.
    assert!(r.out.len() < 20_000, "{} bytes", r.out.len());
}

#[test]
fn item4_findings_per_code_are_listed_up_to_a_budget_and_counted() {
    use infx_report::{Code, Diagnostic, Span};
    let many = Code::error("x/many", "a test code");
    let few = Code::error("x/few", "another");
    let mut diags: Vec<Diagnostic> = (0..5_003)
        .map(|i| Diagnostic::error(many, format!("finding {i}")).at("f.yaml", Span::line(i + 1)))
        .collect();
    diags.push(Diagnostic::error(few, "one").at("g.yaml", Span::line(1)));
    xtask::validate::cap_per_code(&mut diags);
    assert_eq!(diags.iter().filter(|d| d.code == many).count(), 5_000);
    assert_eq!(diags.iter().filter(|d| d.code == few).count(), 1);
    let note = diags.last().unwrap();
    assert_eq!(note.code.as_str(), "validate/truncated");
    assert!(
        note.message
            .starts_with("3 more `x/many` findings not listed"),
        "{}",
        note.message
    );
    assert_eq!(note.span.map(|s| s.start.line()), Some(5_001));
}
