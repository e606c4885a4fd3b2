//! Comments cite this repository's docs, never the specifications kept beside it (issue #14,
//! "self-contained docs"): a user's clone has no `../shared`, so a comment that cites a
//! specification's numbered section points nowhere. Every `docs/<name>.md` a comment names must
//! exist, a heading it quotes after it (`(docs/recipe.md, "Zip variants")`) must be a heading
//! of that file, no comment carries a section sign (U+00A7), and (when `../shared/spec` is there
//! to name them) no comment names a specification file.

use std::path::{Path, PathBuf};

const SECTION_SIGN: char = '\u{a7}';

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

/// Every Rust source file of the workspace (crates/, xtask/, fuzz/), build output left out.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name == "corpus" || name == "artifacts" {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The comment part of a line (after the first `//` that does not belong to a URL).
fn comment(line: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(i) = line[from..].find("//") {
        let at = from + i;
        if !line[..at].ends_with(':') {
            return Some(&line[at..]);
        }
        from = at + 2;
    }
    None
}

/// `name.md` words of a comment, with whether `docs/` stands before each.
fn md_words(text: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    for raw in text.split(|c: char| !(c.is_ascii_alphanumeric() || "._/-".contains(c))) {
        let word = raw.trim_end_matches('.');
        if let Some(stem) = word.strip_suffix(".md")
            && !stem.is_empty()
        {
            match word.strip_prefix("docs/") {
                Some(name) => out.push((true, name.to_string())),
                None => out.push((false, word.rsplit('/').next().unwrap_or(word).to_string())),
            }
        }
    }
    out
}

/// The text of a comment without its marker (`//`, `///`, `//!`).
fn comment_text(c: &str) -> &str {
    c.trim_start_matches('/').trim_start_matches('!').trim()
}

/// The comments of a file as blocks: the text of consecutive whole-line comments joined (so a
/// quoted heading may wrap), and each trailing comment alone; with the first line of each.
fn comment_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        let whole = line.trim_start().starts_with("//");
        if !whole && let Some(block) = open.take() {
            blocks.push(block);
        }
        let Some(c) = comment(line) else { continue };
        if whole {
            let block = open.get_or_insert_with(|| (n + 1, String::new()));
            block.1.push_str(comment_text(c));
            block.1.push(' ');
        } else {
            blocks.push((n + 1, comment_text(c).to_string()));
        }
    }
    blocks.extend(open);
    blocks
}

/// Every `docs/<name>.md, "<heading>"` of a text.
fn cited_headings(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("docs/") {
        rest = &rest[i + "docs/".len()..];
        let Some(md) = rest.find(".md") else { break };
        let name = &rest[..md];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            continue;
        }
        let after = rest[md + ".md".len()..].trim_start();
        if let Some(quoted) = after.strip_prefix(',').map(str::trim_start)
            && let Some(body) = quoted.strip_prefix('"')
            && let Some(end) = body.find('"')
        {
            out.push((format!("{name}.md"), body[..end].to_string()));
        }
    }
    out
}

/// Whether a citation names a heading: the heading starts with the cited text, compared
/// without backticks and case (`"Rendering"` names "Rendering (launch commands)").
fn names(heading: &str, cited: &str) -> bool {
    let plain = |s: &str| s.replace('`', "").to_lowercase();
    plain(heading).starts_with(&plain(cited))
}

/// The headings of a Markdown file (any level), as written after the `#`s.
fn headings(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().to_string())
        .collect()
}

#[test]
fn comments_cite_the_docs_of_this_repository() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["crates", "xtask", "fuzz"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "found only {} Rust files", files.len());
    let spec_dir = root.join("../shared/spec");
    let spec_names: Vec<String> = match std::fs::read_dir(&spec_dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".md") && n != "README.md")
            .collect(),
        Err(_) => {
            println!(
                "SKIP: {} not found: comments naming a specification file are not looked for (the section-sign and docs/ checks still run)",
                spec_dir.display()
            );
            Vec::new()
        }
    };
    let mut faults = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let rel = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        for (line, block) in comment_blocks(&text) {
            for (name, heading) in cited_headings(&block) {
                let Ok(doc) = std::fs::read_to_string(root.join("docs").join(&name)) else {
                    continue;
                };
                if !headings(&doc).iter().any(|h| names(h, &heading)) {
                    faults.push(format!(
                        "{rel}:{line}: docs/{name} has no heading \"{heading}\""
                    ));
                }
            }
        }
        for (n, line) in text.lines().enumerate() {
            let Some(c) = comment(line) else { continue };
            if c.contains(SECTION_SIGN) {
                faults.push(format!("{rel}:{}: a section number: {}", n + 1, c.trim()));
            }
            for (in_docs, name) in md_words(c) {
                if in_docs && !root.join("docs").join(&name).is_file() {
                    faults.push(format!("{rel}:{}: docs/{name} does not exist", n + 1));
                }
                if !in_docs && spec_names.contains(&name) {
                    faults.push(format!(
                        "{rel}:{}: cites the specification {name}, which is not in the repository: {}",
                        n + 1,
                        c.trim()
                    ));
                }
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn the_scan_finds_what_it_looks_for() {
    assert_eq!(
        cited_headings(
            "see (docs/recipe.md, \"Zip variants\"), docs/image.md and docs/a-b.md,  \"X Y\""
        ),
        vec![
            ("recipe.md".to_string(), "Zip variants".to_string()),
            ("a-b.md".to_string(), "X Y".to_string()),
        ]
    );
    assert_eq!(
        comment_blocks("/// a (docs/config.md,\n/// \"B c\")\nfn f() {} // tail\n"),
        vec![
            (1, "a (docs/config.md, \"B c\") ".to_string()),
            (3, "tail".to_string())
        ]
    );
    assert_eq!(
        headings("# A\ntext\n### B c\n"),
        vec!["A".to_string(), "B c".to_string()]
    );
    assert_eq!(
        comment("let x = 1; // see docs/config.md"),
        Some("// see docs/config.md")
    );
    assert_eq!(
        comment("// https://example.invalid/x.md"),
        Some("// https://example.invalid/x.md")
    );
    assert_eq!(comment("let u = \"https://h/p\";"), None);
    assert_eq!(
        md_words("(docs/a-b.md, \"x\"), spec-x.md and recipes/README.md."),
        vec![
            (true, "a-b.md".to_string()),
            (false, "spec-x.md".to_string()),
            (false, "README.md".to_string()),
        ]
    );
}
