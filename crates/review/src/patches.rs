//! Check 10: no engine patches without a waiver (`docs/waiver/<PR>.md` added in the same PR with
//! the required sections).

use crate::codes;
use infx_report::{Diagnostic, Span};
use std::collections::BTreeMap;

pub const CODE: infx_report::Code = codes::ENGINE_PATCH;
pub const CODE_WAIVER: infx_report::Code = codes::WAIVER;

/// How a file changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Added,
    Modified,
    Deleted,
    Renamed,
}

/// One file of the change: its status and the lines it adds (1-based head line numbers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    pub old_path: Option<String>,
    pub status: Status,
    pub added_lines: Vec<(usize, String)>,
}

/// Waiver files present at head, by PR number, with their text.
pub type Waivers = BTreeMap<u64, (String, String)>;

/// The required waiver sections, each recognised by any of its words on a heading or label line.
pub const WAIVER_SECTIONS: &[(&str, &[&str])] = &[
    ("config covered", &["config"]),
    ("what is patched", &["patched", "what is patch", "patch"]),
    ("why the stock image fails", &["why", "stock image"]),
    ("upstream links", &["upstream"]),
    ("removal plan", &["removal", "remove"]),
];

/// Why an added line looks like an engine patch, or `None`.
pub fn patch_indicator(line: &str) -> Option<&'static str> {
    let t = line.trim();
    if t.starts_with('#') || t.starts_with("//") {
        return None; // comments never patch anything
    }
    let l = t.to_ascii_lowercase();
    if l.contains("git apply") || l.contains("git am ") {
        return Some("applies a patch with git");
    }
    if has_patch_command(&l) {
        return Some("runs `patch`");
    }
    if l.contains("sitecustomize") {
        return Some("installs a sitecustomize hook");
    }
    const ENGINE_LOCATIONS: &[&str] = &[
        "site-packages",
        "dist-packages",
        "/sgl-workspace",
        "find_spec",
        "sglang/srt/",
        "vllm/model_executor",
        "vllm/v1/",
        "tensorrt_llm/",
    ];
    let touches_engine = ENGINE_LOCATIONS.iter().any(|p| l.contains(p));
    let writes = l.contains("sed -i")
        || l.contains("cat >")
        || l.contains("tee ")
        || l.contains("<<")
        || l.starts_with("cp ")
        || l.contains(" cp ")
        || l.starts_with("mv ")
        || l.contains(" > ");
    if touches_engine && writes {
        return Some("rewrites installed engine sources");
    }
    let installs =
        l.contains("pip install") || l.contains("pip3 install") || l.contains("uv pip install");
    let engine_pkg = [
        "vllm",
        "sglang",
        "tensorrt",
        "trtllm",
        "flashinfer",
        "sgl-kernel",
        "sgl_kernel",
    ]
    .iter()
    .any(|p| l.contains(p));
    if installs && engine_pkg && (l.contains(".whl") || l.contains("git+")) {
        return Some("installs a rebuilt or forked engine wheel");
    }
    None
}

fn has_patch_command(l: &str) -> bool {
    let bytes = l.as_bytes();
    let mut start = 0;
    while let Some(i) = l[start..].find("patch ") {
        let at = start + i;
        let boundary = at == 0
            || matches!(
                bytes[at - 1],
                b' ' | b';' | b'&' | b'|' | b'(' | b'`' | b'\t'
            );
        let rest = l[at + 6..].trim_start();
        if boundary && (rest.starts_with('-') || rest.starts_with('<')) {
            return true;
        }
        start = at + 6;
    }
    false
}

/// Parses `git diff -U0 -M` output (no colour) into file changes with their added lines.
pub fn parse_unified_diff(text: &str) -> Vec<FileChange> {
    let mut out: Vec<FileChange> = Vec::new();
    let mut in_hunk = false;
    let mut next_line = 0usize;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            // `a/<old> b/<new>`; renames are confirmed by the `rename from/to` lines.
            let b = rest.split_once(" b/").map(|(_, b)| b).unwrap_or(rest);
            out.push(FileChange {
                path: b.to_string(),
                old_path: None,
                status: Status::Modified,
                added_lines: Vec::new(),
            });
            in_hunk = false;
            continue;
        }
        let Some(cur) = out.last_mut() else { continue };
        if !in_hunk {
            if line.starts_with("new file mode") {
                cur.status = Status::Added;
            } else if line.starts_with("deleted file mode") {
                cur.status = Status::Deleted;
            } else if let Some(from) = line.strip_prefix("rename from ") {
                cur.status = Status::Renamed;
                cur.old_path = Some(from.to_string());
            } else if let Some(to) = line.strip_prefix("rename to ") {
                cur.path = to.to_string();
            }
        }
        if let Some(h) = line.strip_prefix("@@ ") {
            // @@ -a,b +c,d @@
            next_line = h
                .split_whitespace()
                .find_map(|t| t.strip_prefix('+'))
                .and_then(|t| t.split(',').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            in_hunk = true;
        } else if in_hunk {
            if let Some(added) = line.strip_prefix('+') {
                cur.added_lines.push((next_line, added.to_string()));
                next_line += 1;
            } else if line.starts_with(' ') {
                next_line += 1;
            }
        }
    }
    out
}

/// Missing sections of a waiver text.
pub fn missing_sections(text: &str) -> Vec<&'static str> {
    let labels: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            l.starts_with('#') || l.starts_with("**") || l.starts_with("- **") || l.contains(':')
        })
        .map(str::to_ascii_lowercase)
        .collect();
    WAIVER_SECTIONS
        .iter()
        .filter(|(_, words)| !labels.iter().any(|l| words.iter().any(|w| l.contains(w))))
        .map(|(name, _)| *name)
        .collect()
}

fn waiver_path(p: &str) -> Option<u64> {
    let rest = p
        .strip_prefix("docs/waiver/")
        .or_else(|| p.strip_prefix("inferencex-e2e/docs/waiver/"))?;
    rest.strip_suffix(".md")?.parse().ok()
}

/// Check 10 over a change. `pr` is the PR number when known; `waivers` the waiver files at head.
pub fn check(changes: &[FileChange], pr: Option<u64>, waivers: &Waivers) -> Vec<Diagnostic> {
    let mut findings: Vec<Diagnostic> = Vec::new();
    for f in changes {
        if f.status == Status::Deleted {
            continue;
        }
        let lower = f.path.to_ascii_lowercase();
        if (lower.ends_with(".patch") || lower.ends_with(".diff"))
            && matches!(f.status, Status::Added | Status::Renamed)
        {
            findings.push(
                Diagnostic::error(CODE, format!("the change adds the patch file `{}`", f.path))
                    .with_path(&f.path),
            );
        }
        if lower.ends_with(".patch")
            || lower.ends_with(".diff")
            || lower.ends_with(".md")
            || lower.starts_with("docs/")
            || lower.contains("/docs/")
        {
            continue; // prose may quote commands
        }
        for (line, text) in &f.added_lines {
            if let Some(why) = patch_indicator(text) {
                findings.push(
                    Diagnostic::error(CODE, format!("added line {why}: `{}`", text.trim()))
                        .at(&f.path, Span::line(*line)),
                );
            }
        }
    }
    if findings.is_empty() {
        return findings;
    }
    let added_in_pr = |n: u64| {
        changes
            .iter()
            .any(|c| c.status == Status::Added && waiver_path(&c.path) == Some(n))
    };
    let help_missing = |n: &str| {
        format!(
            "the pinned image must run as shipped; otherwise add docs/waiver/{n}.md in this PR with: config covered, what is patched, why the stock image fails, upstream links, removal plan"
        )
    };
    match pr {
        None => findings
            .into_iter()
            .map(|d| {
                d.with_help(help_missing("<PR>")).with_note(
                    "the PR number is unknown (pass --pr N), so no waiver can be matched",
                )
            })
            .collect(),
        Some(n) => match waivers.get(&n) {
            None => findings
                .into_iter()
                .map(|d| d.with_help(help_missing(&n.to_string())))
                .collect(),
            Some((path, text)) => {
                let mut out = Vec::new();
                if !added_in_pr(n) {
                    out.push(
                        Diagnostic::error(
                            CODE_WAIVER,
                            format!("waiver `{path}` exists but is not added by this PR"),
                        )
                        .with_path(path)
                        .with_help("a waiver must be added in the PR that introduces the patch"),
                    );
                }
                let missing = missing_sections(text);
                if !missing.is_empty() {
                    out.push(
                        Diagnostic::error(
                            CODE_WAIVER,
                            format!("waiver `{path}` lacks: {}", missing.join(", ")),
                        )
                        .with_path(path)
                        .with_help("add a heading or `Label:` line for each required section"),
                    );
                }
                if out.is_empty() {
                    // Waived: keep the findings visible as notes so a reviewer links the waiver.
                    findings
                        .into_iter()
                        .map(|mut d| {
                            d.severity = infx_report::Severity::Note;
                            d.with_note(format!("waived by {path} (presence is not approval)"))
                        })
                        .collect()
                } else {
                    out.extend(findings);
                    out
                }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(path: &str, lines: &[&str]) -> FileChange {
        FileChange {
            path: path.into(),
            old_path: None,
            status: Status::Added,
            added_lines: lines
                .iter()
                .enumerate()
                .map(|(i, l)| (i + 1, l.to_string()))
                .collect(),
        }
    }
    const WAIVER: &str = "# Waiver 2508\n## Config covered\nkimik3\n## What is patched\nx\n## Why the stock image fails\ny\n## Upstream links\nhttps://github.com/x/y/pull/1\n## Removal plan\nbump\n";

    #[test]
    fn indicators() {
        assert!(patch_indicator("git apply fix.patch").is_some());
        assert!(patch_indicator("  patch -p1 < fix.diff").is_some());
        assert!(
            patch_indicator("sed -i 's/a/b/' /usr/lib/python3/dist-packages/vllm/x.py").is_some()
        );
        assert!(patch_indicator("cat > $(python -c 'import importlib.util; print(importlib.util.find_spec(\"sglang\").origin)') <<EOF").is_some());
        assert!(patch_indicator("pip install https://x/vllm-0.1+fork.whl").is_some());
        assert!(patch_indicator("# git apply fix.patch").is_none());
        assert!(patch_indicator("pip install aiperf==0.3").is_none());
        assert!(patch_indicator("dispatch -x").is_none());
        assert!(patch_indicator("sed -i 's/a/b/' results.json").is_none());
    }

    #[test]
    fn failing_fixture_without_waiver() {
        let c = vec![script(
            "benchmarks/single_node/x.sh",
            &["set -e", "git apply fix.patch"],
        )];
        let d = check(&c, Some(9999), &Waivers::new());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, CODE);
        assert_eq!(d[0].span.map(|s| s.start.line), Some(2));
    }

    #[test]
    fn passing_fixture_with_waiver_added_in_the_pr() {
        let c = vec![
            script(
                "benchmarks/single_node/agentic/apply_k3_container_patches.sh",
                &["git apply /tmp/k3.patch"],
            ),
            script("docs/waiver/2508.md", &[]),
        ];
        let mut w = Waivers::new();
        w.insert(2508, ("docs/waiver/2508.md".into(), WAIVER.into()));
        let d = check(&c, Some(2508), &w);
        assert!(d.iter().all(|d| !d.is_error()), "{d:?}");
    }

    #[test]
    fn incomplete_or_preexisting_waiver_fails() {
        let c = vec![script("a.sh", &["git apply x.patch"])];
        let mut w = Waivers::new();
        w.insert(
            7,
            (
                "docs/waiver/7.md".into(),
                "# Waiver\n## Config covered\n".into(),
            ),
        );
        let d = check(&c, Some(7), &w);
        let codes: Vec<_> = d.iter().map(|d| d.code).collect();
        assert_eq!(codes, [CODE_WAIVER, CODE_WAIVER, CODE]);
    }

    #[test]
    fn unified_diff_parsing() {
        let d = "diff --git a/x.sh b/x.sh\nnew file mode 100644\n--- /dev/null\n+++ b/x.sh\n@@ -0,0 +1,2 @@\n+set -e\n+git apply a.patch\ndiff --git a/old.md b/new.md\nsimilarity index 90%\nrename from old.md\nrename to new.md\n@@ -3 +3,0 @@\n-gone\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -10,2 +12 @@\n-a\n-b\n+c\n";
        let f = parse_unified_diff(d);
        assert_eq!(f.len(), 3);
        assert_eq!((f[0].status, f[0].added_lines.len()), (Status::Added, 2));
        assert_eq!(f[0].added_lines[1], (2, "git apply a.patch".to_string()));
        assert_eq!(
            (f[1].status, f[1].path.as_str(), f[1].old_path.as_deref()),
            (Status::Renamed, "new.md", Some("old.md"))
        );
        assert_eq!(f[2].added_lines, vec![(12, "c".to_string())]);
    }

    #[test]
    fn added_patch_file_is_a_finding() {
        let c = vec![script("benchmarks/fix.patch", &["--- a/x", "+++ b/x"])];
        let d = check(&c, None, &Waivers::new());
        assert_eq!(d.len(), 1);
        assert!(d[0].message.contains("patch file"));
    }
}
