//! A throwaway git repository driven by the real `git` (through duct), and the two sides of
//! the parity comparison: `git diff --check` output and our findings.

#![allow(dead_code)]

use infx_diff::{ChangeOptions, Target, WsKind};
use std::path::Path;

pub(crate) struct Repo {
    pub dir: tempfile::TempDir,
}

/// (file, line, kind): what both sides must agree on.
pub(crate) type Key = (String, usize, WsKind);

impl Repo {
    pub(crate) fn new() -> Repo {
        let dir = tempfile::tempdir().expect("tempdir");
        let r = Repo { dir };
        r.git(&["init", "-q", "-b", "main"]);
        r
    }
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
    pub(crate) fn git(&self, args: &[&str]) -> String {
        let mut full = vec![
            "-c",
            "user.name=infx",
            "-c",
            "user.email=infx@example.invalid",
        ];
        full.extend_from_slice(args);
        duct::cmd("git", &full)
            .dir(self.path())
            .stderr_to_stdout()
            .read()
            .unwrap_or_else(|e| panic!("git {args:?}: {e}"))
    }
    pub(crate) fn write(&self, rel: &str, content: &[u8]) {
        let p = self.path().join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(p, content).expect("write");
    }
    pub(crate) fn commit_all(&self, msg: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", msg]);
        self.git(&["rev-parse", "HEAD"])
    }

    /// `git diff --check [args]` parsed into keys (git exits 2 when it finds something).
    pub(crate) fn git_check(&self, args: &[&str]) -> Vec<Key> {
        let mut full = vec!["diff", "--check", "--no-color"];
        full.extend_from_slice(args);
        let out = duct::cmd("git", &full)
            .dir(self.path())
            .stderr_to_stdout()
            .unchecked()
            .read()
            .expect("git diff --check");
        parse_git_check(&out)
    }

    pub(crate) fn ours(&self, opts: &ChangeOptions) -> Vec<Key> {
        let change = infx_diff::load_change(self.path(), opts)
            .unwrap_or_else(|d| panic!("load_change: {d}"));
        let mut keys: Vec<Key> = infx_diff::findings(&change)
            .into_iter()
            .map(|f| (f.path.display().to_string(), f.line, f.kind))
            .collect();
        keys.sort();
        keys
    }

    /// Compares `git diff --check <base>` (working tree) with ours; returns git's findings.
    pub(crate) fn assert_parity(&self, base: Option<&str>) -> Vec<Key> {
        let base = base.unwrap_or("HEAD");
        let git = self.git_check(&[base]);
        let ours = self.ours(&ChangeOptions::git_diff_check(Some(base)));
        assert_eq!(
            ours,
            git,
            "ours (left) vs git diff --check (right) in {}",
            self.path().display()
        );
        git
    }

    /// Compares `git diff --check A B` with the commit-to-commit mode.
    pub(crate) fn assert_parity_revs(&self, a: &str, b: &str) -> Vec<Key> {
        let git = self.git_check(&[a, b]);
        let opts = ChangeOptions {
            base: Some(a.into()),
            target: Target::Rev(b.into()),
            ..ChangeOptions::default()
        };
        assert_eq!(
            self.ours(&opts),
            git,
            "ours (left) vs git (right), {a}..{b}"
        );
        git
    }
}

/// Reads `file:line: kinds.` and `file:line: leftover conflict marker` lines; the echoed
/// offending lines (starting with `+`) are skipped.
pub(crate) fn parse_git_check(out: &str) -> Vec<Key> {
    let mut keys = Vec::new();
    for l in out.lines() {
        if l.starts_with('+') {
            continue;
        }
        let Some((loc, msg)) = l.rsplit_once(": ") else {
            continue;
        };
        let Some((file, line)) = loc.rsplit_once(':') else {
            continue;
        };
        let Ok(line) = line.parse::<usize>() else {
            continue;
        };
        let msg = msg.strip_suffix('.').unwrap_or(msg);
        for part in msg.split(", ") {
            let kind = WsKind::from_git_message(part)
                .unwrap_or_else(|| panic!("unknown git message {part:?} in {l:?}"));
            keys.push((file.to_string(), line, kind));
        }
    }
    keys.sort();
    keys
}

pub(crate) fn keys(v: &[(&str, usize, WsKind)]) -> Vec<Key> {
    let mut k: Vec<Key> = v.iter().map(|(f, l, k)| (f.to_string(), *l, *k)).collect();
    k.sort();
    k
}
