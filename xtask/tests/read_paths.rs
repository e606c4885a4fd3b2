//! One read path for the whole program (docs/security.md, "Budgets and read paths, with their
//! tests"): every read of a tree goes through infx-fs (confined, regular files only, bounded).
//! This scan fails on any direct `std::fs` read, listing or open in the non-test code of the
//! workspace outside `crates/fs`, unless the allow-list below names it with its reason.

use std::path::{Path, PathBuf};

/// What counts as a direct read (a write-only open is listed too: it must say why).
const PATTERNS: &[&str] = &[
    "fs::read(",
    "fs::read_to_string(",
    "fs::read_dir(",
    "File::open(",
    "OpenOptions::new(",
];

/// Whole files that read no pull request's tree, with why.
const FILES: &[(&str, &str)] = &[
    (
        "xtask-dev/src/conformance/",
        "the differentials read ../shared/corpus (reference data), never a PR's tree",
    ),
    (
        "crates/config/src/golden.rs",
        "upstream's validation goldens in ../shared/corpus, for conformance",
    ),
    (
        "xtask-dev/src/cmd_test.rs",
        "`cargo xtask test` reads the workspace it builds and runs (its code runs anyway)",
    ),
    (
        "xtask/src/cmd_codes.rs",
        "`codes --check` reads the workspace's own docs/ and README.md",
    ),
    (
        "xtask/src/cmd_fuzz.rs",
        "`fuzz` lists the workspace's fuzz/artifacts/ it writes itself",
    ),
];

/// Single lines, by file and a piece of the line, with why.
const LINES: &[(&str, &str, &str)] = &[
    (
        "crates/diff/src/change.rs",
        "std::fs::read_dir(root.join(OsStr::from_bytes(dir)))",
        "lists the names in folders the index tracks (untracked-file detection); reads no content",
    ),
    (
        "crates/diff/src/change.rs",
        "repo.path().join(\"shallow\")",
        "git's own metadata in .git (the shallow boundary), not work-tree content",
    ),
    (
        "crates/image/src/pin.rs",
        "let Ok(entries) = std::fs::read_dir(dir) else {",
        "lists names to remove pin's own stale temporaries; reads no content",
    ),
    (
        "crates/image/src/pin.rs",
        "let mut fh = std::fs::OpenOptions::new()",
        "creates pin's temporary file (write-only, create_new)",
    ),
    (
        "crates/image/src/pin.rs",
        "let file = std::fs::OpenOptions::new()",
        "pin's lock file beside its journal (in .git); locked, never read",
    ),
    (
        "crates/image/src/pin.rs",
        "&& let Ok(d) = std::fs::File::open(dir)",
        "opens a folder to fsync it after renames; reads nothing",
    ),
    (
        "crates/image/src/pin.rs",
        "let text = match std::fs::read_to_string(journal) {",
        "pin's own journal inside .git, which no tree can commit",
    ),
    (
        "xtask/src/cmd_changelog.rs",
        "let text = std::fs::read_to_string(path).ok()?;",
        "git's own state files in .git (MERGE_HEAD, rebase-merge/onto), which no tree can commit",
    ),
    (
        "xtask/src/cmd_pin.rs",
        "match std::fs::read_to_string(&file)",
        "the invoker's registry credentials ($DOCKER_CONFIG), outside any tree; never printed",
    ),
    (
        "xtask/src/validate.rs",
        "let written = std::fs::OpenOptions::new()",
        "appends the job summary to $GITHUB_STEP_SUMMARY (write-only)",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Direct reads in the non-test code of the workspace: (file, line number, line).
fn direct_reads(ws: &Path) -> Vec<(String, usize, String)> {
    let mut files = Vec::new();
    rust_files(&ws.join("xtask/src"), &mut files);
    rust_files(&ws.join("xtask-dev/src"), &mut files);
    let mut crates: Vec<PathBuf> = std::fs::read_dir(ws.join("crates"))
        .expect("crates/")
        .flatten()
        .map(|e| e.path().join("src"))
        .collect();
    crates.sort();
    for c in crates {
        rust_files(&c, &mut files);
    }
    let mut found = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(ws)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.starts_with("crates/fs/") || rel.ends_with("/tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            // A unit-test module closes the file by house style.
            if line.starts_with("#[cfg(test)]") {
                break;
            }
            if PATTERNS.iter().any(|p| line.contains(p)) && !line.contains("infx_fs::") {
                found.push((rel.clone(), i + 1, line.trim().to_string()));
            }
        }
    }
    found
}

#[test]
fn every_direct_std_fs_read_outside_the_file_layer_is_allowed_with_a_reason() {
    let ws = xtask::paths::workspace_root();
    let found = direct_reads(&ws);
    let allowed = |(file, _, line): &(String, usize, String)| {
        FILES.iter().any(|(f, _)| file.starts_with(f))
            || LINES
                .iter()
                .any(|(f, piece, _)| file == f && line.contains(piece))
    };
    let bad: Vec<String> = found
        .iter()
        .filter(|r| !allowed(r))
        .map(|(f, n, l)| format!("{f}:{n}: {l}"))
        .collect();
    assert!(
        bad.is_empty(),
        "direct std::fs reads outside crates/fs (read through infx_fs, or add an allow-list entry with its reason):\n{}",
        bad.join("\n")
    );
    // No stale entry: each still matches something, and each has a reason.
    for (f, piece, why) in LINES {
        assert!(!why.is_empty());
        assert!(
            found
                .iter()
                .any(|(file, _, l)| file == f && l.contains(piece)),
            "stale allow-list entry {f}: {piece}"
        );
    }
    for (f, why) in FILES {
        assert!(!why.is_empty());
        assert!(
            found.iter().any(|(file, _, _)| file.starts_with(f)),
            "stale allow-list entry {f}"
        );
    }
}

#[test]
fn the_scan_finds_a_planted_read() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("crates/diff/src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(tmp.path().join("xtask/src")).unwrap();
    std::fs::write(
        src.join("change.rs"),
        "fn f(p: &Path) -> Vec<u8> {\n    std::fs::read(p).unwrap_or_default()\n}\n#[cfg(test)]\nmod tests { fn g() { std::fs::read(\"x\"); } }\n",
    )
    .unwrap();
    let found = direct_reads(tmp.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "crates/diff/src/change.rs");
    assert_eq!(found[0].1, 2);
}
