//! `cargo xtask conformance real-prs`: upstream's real pull requests as a test corpus
//! (docs/review.md, "Real pull requests as a test corpus").
//!
//! Every first-parent commit of the history bundle since [`SINCE`] that touches the benchmark
//! tree is one squash-merged pull request. Each is validated in-process as its CI would have
//! run it: the tree at the commit, the base its parent. The findings new with the change
//! (errors and warnings whose baseline is not `Unchanged`) and the verdict (new errors fail)
//! are compared with a hand-reviewed expectation file, `xtask-dev/tests/real-prs/expected.tsv`.

use anyhow::{Context, bail};
use infx_report::{BaselineState, Diagnostic, Severity};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Upstream's full `main` to 2026-07-31 (real commit ids; README beside it in the corpus).
pub const BUNDLE: &str = "inferencex-history-to-2026-07-31.bundle";
/// The first day after the configs moved to the repository root (#1992, 2026-07-02): from here
/// the layout is the one validate reads (configs/, benchmarks/, perf-changelog.yaml at the top).
/// An instant, not a bare date: git's `--since=2026-07-03` fills in the current time of day,
/// so the set of commits depended on when the replay ran (141 at 04:00 UTC, 142 between 01:31
/// and 03:58, 143 before). This instant gives the 142 the corpus README counts, the first
/// being `1e53c97` (#1999, committed 03:58:40Z).
pub const SINCE: &str = "2026-07-03T02:00:00Z";
/// The paths whose commits are replayed: the benchmark tree.
pub const PATHS: [&str; 3] = [
    infx_config::layout::CONFIGS_DIR,
    infx_config::layout::BENCHMARKS_DIR,
    infx_config::layout::CHANGELOG,
];
/// The expectation file, relative to the checkout.
pub const EXPECTED: &str = "xtask-dev/tests/real-prs/expected.tsv";

/// One replayed commit: a squash-merged pull request.
#[derive(Debug, Clone)]
pub struct Commit {
    pub id: String,
    pub parent: String,
    /// The PR number from the subject's last `(#NNNN)`; empty when it has none.
    pub pr: String,
    pub subject: String,
}

impl Commit {
    /// The id as the expectation file and the tables write it.
    pub fn short(&self) -> &str {
        self.id.get(..10).unwrap_or(&self.id)
    }
}

/// One finding new with a commit, as compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub code: String,
    pub severity: Severity,
    pub path: String,
    /// 1-based line; `None` for a finding without a span.
    pub line: Option<usize>,
    pub message: String,
}

impl Finding {
    fn key(&self) -> (String, String, Option<usize>) {
        (self.code.clone(), self.path.clone(), self.line)
    }
    fn location(&self) -> String {
        match self.line {
            Some(l) => format!("{}:{l}", self.path),
            None => self.path.clone(),
        }
    }
}

/// What validate said about one commit.
#[derive(Debug, Clone)]
pub struct CommitRun {
    pub commit: Commit,
    /// Errors and warnings new with the change, in report order.
    pub findings: Vec<Finding>,
    /// True when a new error fails the contribution ([`Diagnostic::fails`]).
    pub fails: bool,
    /// True when some finding carries a baseline state: validate compared with the base.
    pub baselined: bool,
    pub elapsed: Duration,
}

/// The findings of a report that are compared: errors and warnings that the base did not
/// already have. Notes are informational and never decide anything (docs/review.md, "Real
/// pull requests as a test corpus").
pub fn compared(diags: &[Diagnostic]) -> (Vec<Finding>, bool) {
    let fails = diags.iter().any(Diagnostic::fails);
    let findings = diags
        .iter()
        .filter(|d| d.baseline != Some(BaselineState::Unchanged))
        .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
        .map(|d| Finding {
            code: d.code.to_string(),
            severity: d.severity,
            path: d
                .path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "-".to_string()),
            line: d.span.map(|s| s.start.line()),
            message: d.message.clone(),
        })
        .collect();
    (findings, fails)
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    duct::cmd("git", args)
        .dir(dir)
        .stderr_capture()
        .read()
        .with_context(|| format!("git {}", args.join(" ")))
}

/// Fetches the bundle's `main` into a new repository `dir/name` (the `git` CLI: libgit2
/// cannot read bundles); nothing is checked out yet.
pub fn clone_bundle(corpus: &Path, dir: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let bundle = corpus.join(BUNDLE);
    if !bundle.is_file() {
        bail!("{} not found", bundle.display());
    }
    let dst = dir.join(name);
    std::fs::create_dir_all(&dst).with_context(|| format!("creating {}", dst.display()))?;
    git(&dst, &["init", "-q"])?;
    let fetch = duct::cmd!("git", "fetch", "-q", &bundle, "main:refs/heads/main")
        .dir(&dst)
        .stderr_capture()
        .run();
    fetch.with_context(|| format!("git fetch {}", bundle.display()))?;
    Ok(dst)
}

/// The replayed commits, oldest first.
pub fn commits(clone: &Path) -> anyhow::Result<Vec<Commit>> {
    let since = format!("--since={SINCE}");
    let mut args = vec![
        "log",
        "--first-parent",
        "--reverse",
        &since,
        "--format=%H%x09%P%x09%s",
        "main",
        "--",
    ];
    args.extend(PATHS);
    let out = git(clone, &args)?;
    let mut list = Vec::new();
    for line in out.lines() {
        let mut f = line.splitn(3, '\t');
        let (Some(id), Some(parents), Some(subject)) = (f.next(), f.next(), f.next()) else {
            bail!("git log: unexpected line {line:?}");
        };
        let Some(parent) = parents.split_whitespace().next() else {
            bail!("commit {id} has no parent");
        };
        list.push(Commit {
            id: id.to_string(),
            parent: parent.to_string(),
            pr: pr_of(subject),
            subject: subject.to_string(),
        });
    }
    Ok(list)
}

/// The number of the subject's last `(#NNNN)`.
fn pr_of(subject: &str) -> String {
    subject
        .rmatch_indices("(#")
        .find_map(|(i, _)| {
            let rest = &subject[i + 2..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            (!digits.is_empty() && rest[digits.len()..].starts_with(')')).then_some(digits)
        })
        .unwrap_or_default()
}

/// Validates one commit in the work tree `clone`: checked out at the commit, base its parent.
fn validate_commit(clone: &Path, c: &Commit) -> anyhow::Result<CommitRun> {
    git(clone, &["checkout", "-q", "--force", "--detach", &c.id])?;
    // A tree the previous commit left files in would not be the commit's tree.
    git(clone, &["clean", "-q", "-fdx"])?;
    let t = Instant::now();
    let opts = xtask::validate::Options {
        base: Some(c.parent.clone()),
        hermetic: true,
        pr: c.pr.parse().ok(),
        ..xtask::validate::Options::new(clone)
    };
    let report = xtask::validate::validate(&opts);
    let diags = report.diagnostics();
    let (findings, fails) = compared(&diags);
    Ok(CommitRun {
        commit: c.clone(),
        findings,
        fails,
        baselined: diags.iter().any(|d| d.baseline.is_some()),
        elapsed: t.elapsed(),
    })
}

/// Which commits to replay.
#[derive(Debug, Clone, Default)]
pub enum Selection {
    #[default]
    All,
    /// Commits whose id starts with one of these, or whose PR number is one of them.
    Only(Vec<String>),
    /// Every n-th commit, oldest first, starting with the first: the test suite's fixed sample
    /// (docs/review.md, "Real pull requests as a test corpus").
    Every(usize),
}

impl Selection {
    fn keeps(&self, c: &Commit) -> bool {
        match self {
            Selection::All | Selection::Every(_) => true,
            Selection::Only(names) => names
                .iter()
                .any(|n| c.pr == *n || (n.len() >= 7 && c.id.starts_with(n.as_str()))),
        }
    }
}

/// Replays the selected commits: two clones, one per thread (the runs are independent; on two
/// cores the checkouts of one overlap the checks of the other), results in commit order.
pub fn replay(corpus: &Path, selection: &Selection) -> anyhow::Result<(Vec<CommitRun>, Duration)> {
    let t = Instant::now();
    let tmp = tempfile::tempdir()?;
    let first = clone_bundle(corpus, tmp.path(), "ix-0")?;
    let step = match selection {
        Selection::Every(n) => (*n).max(1),
        _ => 1,
    };
    let list: Vec<Commit> = commits(&first)?
        .into_iter()
        .step_by(step)
        .filter(|c| selection.keeps(c))
        .collect();
    let workers = if list.len() > 1 { 2 } else { 1 };
    let mut clones = vec![first];
    for w in 1..workers {
        clones.push(clone_bundle(corpus, tmp.path(), &format!("ix-{w}"))?);
    }
    let chunks: Vec<Vec<(usize, Commit)>> = (0..workers)
        .map(|w| {
            list.iter()
                .enumerate()
                .filter(|(i, _)| i % workers == w)
                .map(|(i, c)| (i, c.clone()))
                .collect()
        })
        .collect();
    let results: Vec<anyhow::Result<Vec<(usize, CommitRun)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .zip(&clones)
            .map(|(chunk, clone)| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(i, c)| validate_commit(clone, c).map(|r| (*i, r)))
                        .collect::<anyhow::Result<Vec<_>>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a replay worker panicked")))
            })
            .collect()
    });
    let mut runs = Vec::with_capacity(list.len());
    for r in results {
        runs.extend(r?);
    }
    runs.sort_by_key(|(i, _)| *i);
    Ok((runs.into_iter().map(|(_, r)| r).collect(), t.elapsed()))
}

/// A row's kind: an expected finding, or the commit's expected verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A real defect upstream merged; the reason states the evidence.
    Defect,
    /// A deliberate, documented strictness; the reason cites a docs page and its section.
    Strict,
    /// A finding infx makes that is wrong: an open bug, never an expectation. Its commit is
    /// counted as blocked, not as expected, and its verdict is judged without it; a bug row
    /// no finding matches any more fails the run, so the list only shrinks (docs/review.md,
    /// "Known bugs"). The reason names the issue (`#NN`).
    Bug,
    Pass,
    Fail,
}

/// One row of the expectation file.
#[derive(Debug, Clone)]
pub struct Row {
    /// 1-based line in the file.
    pub at: usize,
    pub commit: String,
    pub pr: String,
    pub code: String,
    pub path: String,
    pub line: Option<usize>,
    pub kind: Kind,
    pub reason: String,
}

impl Row {
    fn matches(&self, c: &Commit) -> bool {
        self.commit.len() >= 7 && c.id.starts_with(&self.commit)
    }
    fn key(&self) -> (String, String, Option<usize>) {
        (self.code.clone(), self.path.clone(), self.line)
    }
}

/// The code column of a verdict row.
pub const VERDICT: &str = "verdict";

/// Parses the expectation file (format: docs/review.md, "Real pull requests as a test
/// corpus"). `checkout` is where a strict row's cited docs/ file and section are looked up.
pub fn parse_expected(text: &str, checkout: &Path) -> Result<Vec<Row>, Vec<String>> {
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let at = i + 1;
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = raw.split('\t').collect();
        if f.len() != 7 {
            errors.push(format!(
                "line {at}: {} tab-separated fields, want 7 (commit pr code path line kind reason)",
                f.len()
            ));
            continue;
        }
        let line = match f[4] {
            "-" => None,
            n => match n.parse::<usize>() {
                Ok(n) => Some(n),
                Err(_) => {
                    errors.push(format!("line {at}: line {n:?} is neither a number nor -"));
                    continue;
                }
            },
        };
        let kind = match (f[2] == VERDICT, f[5]) {
            (false, "defect") => Kind::Defect,
            (false, "strict") => Kind::Strict,
            (false, "bug") => Kind::Bug,
            (true, "pass") => Kind::Pass,
            (true, "fail") => Kind::Fail,
            (is_verdict, k) => {
                let want = if is_verdict {
                    "pass or fail"
                } else {
                    "defect, strict or bug"
                };
                errors.push(format!("line {at}: kind {k:?}, want {want}"));
                continue;
            }
        };
        let reason = f[6].trim();
        if matches!(kind, Kind::Defect | Kind::Strict | Kind::Fail) && reason.len() < 10 {
            errors.push(format!("line {at}: a {} row needs its reason", f[5]));
            continue;
        }
        if kind == Kind::Bug && !names_an_issue(reason) {
            errors.push(format!("line {at}: a bug row names its issue (#NN)"));
            continue;
        }
        if kind == Kind::Strict
            && let Err(e) = cites_a_section(reason, checkout)
        {
            errors.push(format!("line {at}: {e}"));
            continue;
        }
        if f[0].len() < 7 || !f[0].bytes().all(|b| b.is_ascii_hexdigit()) {
            errors.push(format!(
                "line {at}: commit {:?} is not an abbreviated id",
                f[0]
            ));
            continue;
        }
        rows.push(Row {
            at,
            commit: f[0].to_string(),
            pr: f[1].to_string(),
            code: f[2].to_string(),
            path: f[3].to_string(),
            line,
            kind,
            reason: reason.to_string(),
        });
    }
    if errors.is_empty() {
        Ok(rows)
    } else {
        Err(errors)
    }
}

/// Whether `reason` names an issue: `#` and digits.
fn names_an_issue(reason: &str) -> bool {
    reason
        .match_indices('#')
        .any(|(i, _)| reason[i + 1..].starts_with(|c: char| c.is_ascii_digit()))
}

/// A strict row's reason must cite a page of this project's docs with its section (the
/// page path, a comma, the heading in double quotes), and that section must exist: a strictness is deliberate only where a maintainer wrote down why.
fn cites_a_section(reason: &str, checkout: &Path) -> Result<(), String> {
    let Some(start) = reason.find("docs/") else {
        return Err("a strict row must cite docs/FILE.md, \"Section\"".to_string());
    };
    let rest = &reason[start..];
    let Some(end) = rest.find(".md") else {
        return Err("a strict row must cite docs/FILE.md, \"Section\"".to_string());
    };
    let file = &rest[..end + 3];
    let Some(section) = rest[end + 3..]
        .strip_prefix(", \"")
        .and_then(|s| s.split('"').next())
    else {
        return Err(format!("{file} cited without its \"Section\""));
    };
    let text = std::fs::read_to_string(checkout.join(file))
        .map_err(|e| format!("{file} cited but not readable: {e}"))?;
    let found = text.lines().any(|l| {
        l.starts_with('#')
            && l.trim_start_matches('#')
                .trim()
                .trim_matches('`')
                .starts_with(section)
    });
    if found {
        Ok(())
    } else {
        Err(format!("{file} has no section \"{section}\""))
    }
}

/// One line of the failure table.
#[derive(Debug, Clone)]
pub struct Mismatch {
    pub commit: String,
    pub pr: String,
    /// `unexpected`, `missing`, `verdict`, `no row`, `stale row`.
    pub what: &'static str,
    pub code: String,
    pub location: String,
    pub message: String,
}

/// The comparison of a replay with the expectation file.
#[derive(Debug, Default)]
pub struct Comparison {
    pub total: usize,
    pub as_expected: usize,
    pub pass: usize,
    pub fail: usize,
    /// Strict rows matched by a finding.
    pub strict: usize,
    /// Commits whose findings are as expected but for known infx bugs (bug rows).
    pub blocked: usize,
    /// Findings matched by bug rows.
    pub bugs: usize,
    pub mismatches: Vec<Mismatch>,
}

impl Comparison {
    /// The summary line (README, "Conformance and performance").
    pub fn summary(&self) -> String {
        let mut s = format!(
            "real-prs: {}/{} commits as expected ({} pass, {} fail with their defect; {} deliberate-strictness findings)",
            self.as_expected, self.total, self.pass, self.fail, self.strict
        );
        if self.blocked > 0 {
            let _ = write!(
                s,
                "; {} blocked by {} known-bug findings",
                self.blocked, self.bugs
            );
        }
        s
    }

    /// The mismatches as an aligned table.
    pub fn table(&self) -> String {
        let head = ["commit", "PR", "", "code", "path:line", "message"];
        let rows: Vec<[String; 6]> = self
            .mismatches
            .iter()
            .map(|m| {
                [
                    m.commit.clone(),
                    m.pr.clone(),
                    m.what.to_string(),
                    m.code.clone(),
                    m.location.clone(),
                    xtask::hygiene::escape_line(&m.message).into_owned(),
                ]
            })
            .collect();
        let mut width = head.map(str::len);
        for r in &rows {
            for (w, cell) in width.iter_mut().zip(r).take(5) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let line = |out: &mut String, cells: [&str; 6]| {
            let mut s = String::new();
            for (i, cell) in cells.iter().enumerate() {
                if i < 5 {
                    let _ = write!(s, "{cell:<w$}  ", w = width[i]);
                } else {
                    s.push_str(cell);
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(&mut out, head);
        for r in &rows {
            line(&mut out, [&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]]);
        }
        out
    }
}

/// Compares the runs with the rows. Every run needs a verdict row; every finding a row of
/// its commit with its code, path and line (as many rows as findings); rows of commits that
/// were replayed and matched no finding are missing findings. With `all` (the whole replay),
/// rows of commits that were not replayed are stale.
pub fn compare(runs: &[CommitRun], rows: &[Row], all: bool) -> Comparison {
    let mut cmp = Comparison {
        total: runs.len(),
        ..Comparison::default()
    };
    let mut used = HashSet::new();
    for run in runs {
        let c = &run.commit;
        let mut bad = Vec::new();
        let mine: Vec<&Row> = rows.iter().filter(|r| r.matches(c)).collect();
        mine.iter().for_each(|r| {
            used.insert(r.at);
        });
        let verdicts: Vec<&&Row> = mine.iter().filter(|r| r.code == VERDICT).collect();
        // The verdict is judged without the findings that known bugs explain.
        let mut bug_rows: BTreeMap<(String, String, Option<usize>), usize> = BTreeMap::new();
        for r in mine.iter().filter(|r| r.kind == Kind::Bug) {
            *bug_rows.entry(r.key()).or_default() += 1;
        }
        let fails = run.findings.iter().any(|f| {
            f.severity == Severity::Error
                && match bug_rows.get_mut(&f.key()) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        false
                    }
                    _ => true,
                }
        });
        let actual = if fails { "fail" } else { "pass" };
        match verdicts.as_slice() {
            [v] => {
                let want = if v.kind == Kind::Fail { "fail" } else { "pass" };
                if want != actual {
                    bad.push(mismatch(
                        c,
                        "verdict",
                        VERDICT,
                        "-",
                        &format!("expected {want}, validate says {actual}"),
                    ));
                }
            }
            [] => bad.push(mismatch(
                c,
                "no row",
                VERDICT,
                "-",
                &format!("no verdict row (validate says {actual}): {}", c.subject),
            )),
            _ => bad.push(mismatch(
                c,
                "verdict",
                VERDICT,
                "-",
                "more than one verdict row",
            )),
        }
        // Multiset match on (code, path, line): each row accounts for one finding.
        let mut expected: BTreeMap<(String, String, Option<usize>), Vec<&Row>> = BTreeMap::new();
        for r in mine.iter().filter(|r| r.code != VERDICT) {
            expected.entry(r.key()).or_default().push(r);
        }
        let (mut strict, mut bugs) = (0, 0);
        for f in &run.findings {
            match expected.get_mut(&f.key()).and_then(Vec::pop) {
                Some(r) => {
                    strict += usize::from(r.kind == Kind::Strict);
                    bugs += usize::from(r.kind == Kind::Bug);
                }
                None => bad.push(mismatch(
                    c,
                    "unexpected",
                    &f.code,
                    &f.location(),
                    &format!("{}: {}", f.severity, f.message),
                )),
            }
        }
        for r in expected.values().flatten() {
            let loc = match r.line {
                Some(l) => format!("{}:{l}", r.path),
                None => r.path.clone(),
            };
            bad.push(mismatch(c, "missing", &r.code, &loc, &r.reason));
        }
        if bad.is_empty() && bugs > 0 {
            cmp.blocked += 1;
            cmp.bugs += bugs;
        } else if bad.is_empty() {
            cmp.as_expected += 1;
            if fails {
                cmp.fail += 1;
            } else {
                cmp.pass += 1;
            }
            cmp.strict += strict;
        }
        cmp.mismatches.extend(bad);
    }
    if all {
        for r in rows.iter().filter(|r| !used.contains(&r.at)) {
            cmp.mismatches.push(Mismatch {
                commit: r.commit.clone(),
                pr: r.pr.clone(),
                what: "stale row",
                code: r.code.clone(),
                location: format!("{EXPECTED}:{}", r.at),
                message: "no replayed commit has this id".to_string(),
            });
        }
    }
    cmp
}

fn mismatch(c: &Commit, what: &'static str, code: &str, location: &str, msg: &str) -> Mismatch {
    Mismatch {
        commit: c.short().to_string(),
        pr: c.pr.clone(),
        what,
        code: code.to_string(),
        location: location.to_string(),
        message: msg.to_string(),
    }
}

/// A draft expectation file from the runs: the rows of `rows` that still match keep their
/// kind and reason; every other finding gets kind `?` and its message as the reason, which
/// the parser rejects until a person labels it (a finding nobody can defend is a bug in
/// infx, not an expectation: docs/review.md, "Real pull requests as a test corpus").
pub fn draft(runs: &[CommitRun], rows: &[Row]) -> String {
    let mut out = String::from(HEADER);
    for run in runs {
        let c = &run.commit;
        let mine: Vec<&Row> = rows.iter().filter(|r| r.matches(c)).collect();
        let verdict = if run.fails { "fail" } else { "pass" };
        let kept = mine
            .iter()
            .find(|r| r.code == VERDICT && (r.kind == Kind::Fail) == run.fails);
        let reason = kept.map_or("-", |r| r.reason.as_str());
        let _ = writeln!(
            out,
            "{}\t{}\t{VERDICT}\t-\t-\t{verdict}\t{reason}",
            c.short(),
            c.pr
        );
        let mut expected: BTreeMap<(String, String, Option<usize>), Vec<&Row>> = BTreeMap::new();
        for r in mine.iter().filter(|r| r.code != VERDICT) {
            expected.entry(r.key()).or_default().push(r);
        }
        for f in &run.findings {
            let line = f.line.map_or("-".to_string(), |l| l.to_string());
            let (kind, reason) = match expected.get_mut(&f.key()).and_then(Vec::pop) {
                Some(r) => (
                    match r.kind {
                        Kind::Strict => "strict",
                        Kind::Bug => "bug",
                        _ => "defect",
                    },
                    r.reason.clone(),
                ),
                None => (
                    "?",
                    format!(
                        "{}: {}",
                        f.severity,
                        xtask::hygiene::escape_line(&f.message).replace('\t', " ")
                    ),
                ),
            };
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{}\t{line}\t{kind}\t{reason}",
                c.short(),
                c.pr,
                f.code,
                f.path
            );
        }
    }
    out
}

/// Said when no finding carries a baseline state.
pub const NO_BASELINE: &str = "real-prs: note: no finding carries a baseline state (validate does not compare with the base yet), so every finding counts as new";

/// The header every expectation file starts with.
pub const HEADER: &str = "\
# Expected findings of `cargo xtask conformance real-prs` (docs/review.md, \"Real pull requests
# as a test corpus\"). Tab-separated: commit pr code path line kind reason.
# A verdict row per commit: code `verdict`, path and line `-`, kind pass|fail.
# A row per expected new error or warning: kind `defect` (the reason states what is wrong in
# the file upstream merged) or `strict` (the reason cites docs/FILE.md, \"Section\").
# A finding nobody can defend is a bug in infx: fix infx, never add a row for it.
";

/// Options of the area beyond the shared conformance flags.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub selection: Selection,
    /// Write a draft expectation file here (a labelling aid; never the committed file unread).
    pub draft: Option<PathBuf>,
    /// The expectation file (default: [`EXPECTED`] in the checkout).
    pub expected: Option<PathBuf>,
    /// Print every finding of every commit, expected or not.
    pub verbose: bool,
}

/// The whole area: replay, compare, print. True when it did not fully match.
pub fn run(corpus: &Path, checkout: &Path, opts: &RunOptions) -> anyhow::Result<bool> {
    let expected_path = opts
        .expected
        .clone()
        .unwrap_or_else(|| checkout.join(EXPECTED));
    let text = std::fs::read_to_string(&expected_path)
        .with_context(|| format!("reading {}", expected_path.display()))?;
    let rows = match parse_expected(&text, checkout) {
        Ok(rows) => rows,
        // A draft run must still work on a file being labelled: its parsable rows are kept.
        Err(errors) if opts.draft.is_some() => {
            for e in &errors {
                eprintln!("{}: {e}", expected_path.display());
            }
            parse_expected_lenient(&text, checkout)
        }
        Err(errors) => {
            for e in &errors {
                println!("{}: {e}", expected_path.display());
            }
            bail!("{} does not parse", expected_path.display());
        }
    };
    let (runs, elapsed) = replay(corpus, &opts.selection)?;
    let cmp = compare(&runs, &rows, matches!(opts.selection, Selection::All));
    if opts.verbose {
        for r in &runs {
            println!(
                "{} #{} {} ({} findings, {:.0} ms) {}",
                r.commit.short(),
                r.commit.pr,
                if r.fails { "fail" } else { "pass" },
                r.findings.len(),
                r.elapsed.as_secs_f64() * 1000.0,
                xtask::hygiene::escape_line(&r.commit.subject)
            );
            for f in &r.findings {
                println!(
                    "  {} {} {}: {}",
                    f.code,
                    f.location(),
                    f.severity,
                    xtask::hygiene::escape_line(&f.message)
                );
            }
        }
    }
    if !cmp.mismatches.is_empty() {
        print!("{}", cmp.table());
    }
    if !runs.iter().any(|r| r.baselined) {
        println!("{NO_BASELINE}");
    }
    println!("{}", cmp.summary());
    println!(
        "real-prs: {} commits replayed in {:.1} s",
        runs.len(),
        elapsed.as_secs_f64()
    );
    if let Some(path) = &opts.draft {
        std::fs::write(path, draft(&runs, &rows))
            .with_context(|| format!("writing {}", path.display()))?;
        println!(
            "real-prs: draft written to {} (label every `?` row by hand)",
            path.display()
        );
    }
    Ok(cmp.as_expected != cmp.total || !cmp.mismatches.is_empty())
}

/// The rows of a file being labelled that parse, one line at a time.
fn parse_expected_lenient(text: &str, checkout: &Path) -> Vec<Row> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        // Keep the line number: parse the line alone, padded with the lines before it.
        let padded = format!("{}{line}\n", "\n".repeat(i));
        if let Ok(r) = parse_expected(&padded, checkout) {
            rows.extend(r);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(id: &str, pr: &str) -> Commit {
        Commit {
            id: id.to_string(),
            parent: "0".repeat(40),
            pr: pr.to_string(),
            subject: format!("change (#{pr})"),
        }
    }

    fn finding(code: &str, path: &str, line: usize, sev: Severity) -> Finding {
        Finding {
            code: code.to_string(),
            severity: sev,
            path: path.to_string(),
            line: Some(line),
            message: "m".to_string(),
        }
    }

    #[test]
    fn the_pr_number_is_the_subjects_last() {
        assert_eq!(pr_of("Revert x (#1967, #1968) (#1999)"), "1999");
        assert_eq!(pr_of("no number"), "");
        assert_eq!(pr_of("bump (#12a)"), "");
    }

    #[test]
    fn rows_parse_and_strict_rows_cite_an_existing_section() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("docs")).expect("mkdir");
        std::fs::write(dir.path().join("docs/x.md"), "# X\n\n## Pins everywhere\n").expect("w");
        let ok = "abcdef0123\t1\tverdict\t-\t-\tpass\t-\n\
                  abcdef0123\t1\timage/unpinned\tconfigs/a.yaml\t3\tstrict\tdocs/x.md, \"Pins everywhere\" says so\n";
        let rows = parse_expected(ok, dir.path()).expect("parses");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].kind, Kind::Strict);
        let bad = "abcdef0123\t1\timage/unpinned\tconfigs/a.yaml\t3\tstrict\tdocs/x.md, \"Nowhere\" says so\n\
                   abcdef0123\t1\tconfig/C2\tconfigs/a.yaml\t3\t?\tTODO\n\
                   abcdef0123\t1\tconfig/C2\tconfigs/a.yaml\tx\tdefect\tthe tp is 3, not a power of two\n";
        let errors = parse_expected(bad, dir.path()).expect_err("rejected");
        assert_eq!(errors.len(), 3, "{errors:?}");
    }

    #[test]
    fn unexpected_missing_and_verdict_mismatches_are_reported() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rows = parse_expected(
            "aaaaaaa111\t1\tverdict\t-\t-\tfail\tthe tp of x is 3 (C2)\n\
             aaaaaaa111\t1\tconfig/C2\tconfigs/a.yaml\t3\tdefect\ttp: 3 is not a power of two\n\
             bbbbbbb222\t2\tverdict\t-\t-\tpass\t-\n\
             bbbbbbb222\t2\tconfig/C2\tconfigs/a.yaml\t9\tdefect\ttp: 3 is not a power of two\n\
             ccccccc333\t3\tverdict\t-\t-\tpass\t-\n",
            dir.path(),
        )
        .expect("parses");
        let runs = vec![
            CommitRun {
                commit: commit(&format!("aaaaaaa111{}", "0".repeat(30)), "1"),
                findings: vec![finding("config/C2", "configs/a.yaml", 3, Severity::Error)],
                fails: true,
                baselined: true,
                elapsed: Duration::ZERO,
            },
            CommitRun {
                commit: commit(&format!("bbbbbbb222{}", "0".repeat(30)), "2"),
                findings: vec![finding(
                    "image/unpinned",
                    "configs/a.yaml",
                    4,
                    Severity::Warning,
                )],
                fails: false,
                baselined: true,
                elapsed: Duration::ZERO,
            },
        ];
        let cmp = compare(&runs, &rows, true);
        assert_eq!((cmp.as_expected, cmp.total, cmp.fail), (1, 2, 1));
        let what: Vec<&str> = cmp.mismatches.iter().map(|m| m.what).collect();
        assert_eq!(what, ["unexpected", "missing", "stale row"]);
        assert!(
            cmp.summary()
                .starts_with("real-prs: 1/2 commits as expected (0 pass, 1 fail")
        );
        let table = cmp.table();
        assert!(table.contains("image/unpinned"), "{table}");
        // The draft keeps the matched row and marks the new finding for labelling.
        let d = draft(&runs, &rows);
        assert!(d.contains("\tdefect\ttp: 3 is not a power of two"), "{d}");
        assert!(d.contains("image/unpinned\tconfigs/a.yaml\t4\t?\t"), "{d}");
    }
}
