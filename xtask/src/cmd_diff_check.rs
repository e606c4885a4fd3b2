//! `cargo xtask diff-check` (owner: diff): the whitespace errors `git diff --check <base>`
//! reports for the complete change (base → working tree), as diagnostics.

use crate::output::{self, Format};
use infx_diff::{BaseSource, Change, ChangeOptions, Target};
use infx_report::SourceMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Base revision (default: merge-base of HEAD with the first upstream branch that exists).
    /// `REV...` means the merge-base of HEAD with REV.
    #[arg(long)]
    pub base: Option<String>,
    /// Upstream branch candidates for the default base, in order (repeatable).
    #[arg(long = "upstream", value_name = "BRANCH", default_values_t = infx_diff::DEFAULT_UPSTREAMS.map(String::from))]
    pub upstreams: Vec<String>,
    /// Check this revision against the base instead of the working tree (`git diff --check BASE REV`).
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,
    /// Also check untracked, not ignored files (as if `git add -N`); git itself skips them.
    #[arg(long, conflicts_with = "rev")]
    pub untracked: bool,
    /// The repository (any directory inside it). Default: the current directory.
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

fn describe_base(change: &Change) -> String {
    let short = |c: &Option<String>| match c {
        Some(id) => id.chars().take(12).collect::<String>(),
        None => "the empty tree".to_string(),
    };
    let id = short(&change.set.base.commit);
    match &change.set.base.source {
        BaseSource::Explicit => format!("base {id}"),
        BaseSource::MergeBase { upstream } => {
            format!("base {id} (merge-base of HEAD and {upstream})")
        }
        BaseSource::UnbornHead => "base: the empty tree (no commit yet)".to_string(),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = ChangeOptions {
        base: args.base.clone(),
        upstreams: args.upstreams.clone(),
        target: args.rev.clone().map_or(Target::WorkTree, Target::Rev),
        untracked: args.untracked,
    };
    let loaded = infx_diff::open_repository(&args.repo).and_then(|repo| {
        // This command confines itself, to the repository it has just opened, before it reads
        // a file: the search for it is then made once (xtask/src/confine.rs).
        let root = repo.workdir().unwrap_or_else(|| repo.git_dir());
        let _ = infx_fs::confine_to(&root);
        infx_diff::load_change_in(&repo, &opts)
    });
    let mut change = match loaded {
        Ok(c) => c,
        Err(d) => {
            print!("{}", output::render(&[d], &SourceMap::new(), args.format));
            return Ok(ExitCode::from(1));
        }
    };
    let diags = infx_diff::whitespace_errors(&change);
    let checked = change.texts.len();
    let mut sources = SourceMap::new();
    // Only the human format shows source lines; skip indexing big files for the others.
    // A set: a tree-wide change has tens of thousands of files and findings (docs/performance.md).
    let with_findings: std::collections::HashSet<&std::path::Path> =
        diags.iter().filter_map(|d| d.path.as_deref()).collect();
    let texts = std::mem::take(&mut change.texts);
    for t in texts.into_iter().filter(|_| args.format == Format::Human) {
        if with_findings.contains(t.path.as_path()) {
            // One copy of each file with findings (the text is shared with the diff).
            let text = String::from_utf8_lossy(&t.new).into_owned();
            sources.insert_owned(&t.path, text);
        }
    }
    print!("{}", output::render(&diags, &sources, args.format));
    let files_with = {
        let mut p: Vec<_> = diags.iter().filter_map(|d| d.path.as_ref()).collect();
        p.dedup();
        p.len()
    };
    // The summary goes to stderr so JSON and GitHub output stay machine-readable.
    eprintln!(
        "diff-check: {} finding(s) in {} file(s); {} changed file(s), {} checked, {} binary skipped; {}",
        diags.len(),
        files_with,
        change.set.files.len(),
        checked,
        change.binary.len(),
        describe_base(&change),
    );
    Ok(if diags.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn defaults_and_options_parse() {
        let a = Cli::parse_from(["x"]).args;
        assert_eq!(a.upstreams, ["origin/main", "upstream/main", "main"]);
        assert_eq!(a.format, Format::Human);
        let a = Cli::parse_from([
            "x",
            "--base",
            "HEAD~2",
            "--upstream",
            "up/dev",
            "--format",
            "json",
        ])
        .args;
        assert_eq!(a.base.as_deref(), Some("HEAD~2"));
        assert_eq!(a.upstreams, ["up/dev"]);
        assert!(Cli::try_parse_from(["x", "--rev", "HEAD", "--untracked"]).is_err());
    }

    fn args(repo: &std::path::Path, base: &str) -> Args {
        let mut a = Cli::parse_from(["x", "--base", base, "--format", "json"]).args;
        a.repo = repo.to_path_buf();
        a
    }

    #[test]
    fn exit_code_is_one_on_findings_and_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = |args: &[&str]| {
            let mut full = vec!["-c", "user.name=t", "-c", "user.email=t@example.invalid"];
            full.extend_from_slice(args);
            duct::cmd("git", &full)
                .dir(dir.path())
                .stdout_null()
                .run()
                .expect("git");
        };
        git(&["init", "-q", "-b", "main"]);
        std::fs::write(dir.path().join("a.yaml"), "a: 1\n").expect("write");
        git(&["add", "a.yaml"]);
        git(&["commit", "-q", "-m", "base"]);
        assert_eq!(
            run(args(dir.path(), "HEAD")).expect("run"),
            ExitCode::SUCCESS
        );
        std::fs::write(dir.path().join("a.yaml"), "a: 1\nb: 2 \n").expect("write");
        assert_eq!(
            run(args(dir.path(), "HEAD")).expect("run"),
            ExitCode::from(1)
        );
        assert_eq!(
            run(args(dir.path(), "no-such-rev")).expect("run"),
            ExitCode::from(1)
        );
    }
}
