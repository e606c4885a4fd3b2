//! `cargo xtask codes`: the table of every registered diagnostic code (code, default severity,
//! crate, summary), and `--check`, which fails when the code tables in docs/*.md and README.md
//! drift from the registries (README, "Diagnostic codes").
//!
//! A code is documented when a Markdown table row names it in backticks (`` `config/X5` ``) in
//! any cell; prose does not count. Each code is written out in full: a range such as
//! `` `config/C2`…`C5` `` documents only its first code.

use crate::codes::all_codes;
use infx_report::Code;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Compare the code tables in docs/*.md and README.md with the registries; exit 1 with the
    /// differing rows when they drift.
    #[arg(long)]
    pub check: bool,
    /// The checkout whose docs/ and README.md are checked (default: the checkout you stand in,
    /// found as validate finds it).
    #[arg(long, value_name = "DIR", requires = "check")]
    pub docs_root: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let codes = all_codes();
    if !args.check {
        print!("{}", table(&codes));
        return Ok(ExitCode::SUCCESS);
    }
    // Found at run time, never where the binary was built: a copied binary checks the clone it
    // runs in (paths.rs, the rule for every default).
    let root = args.docs_root.unwrap_or_else(crate::paths::checkout_root);
    let docs = read_docs(&root)?;
    let drift = compare(&codes, &documented(&docs, &checks_of(&codes)));
    if drift.is_empty() {
        println!(
            "codes: the {} registered codes and the code tables in docs/ and README.md agree",
            codes.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for d in &drift {
        println!("{d}");
    }
    println!(
        "codes: {} differing rows between the registries and the code tables in {}",
        drift.len(),
        root.display()
    );
    Ok(ExitCode::from(1))
}

/// The aligned table `cargo xtask codes` prints.
pub fn table(codes: &[(&'static str, Code)]) -> String {
    let width = codes
        .iter()
        .map(|(_, c)| c.as_str().len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!(
        "{:width$}  {:8}  {:14}  DESCRIPTION\n",
        "CODE", "SEVERITY", "CRATE"
    );
    for (krate, c) in codes {
        out.push_str(&format!(
            "{:width$}  {:8}  {:14}  {}\n",
            c.as_str(),
            c.severity().to_string(),
            krate,
            c.summary()
        ));
    }
    out
}

/// README.md and every docs/*.md, as (path relative to `root`, text), in path order.
fn read_docs(root: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let mut files = vec![PathBuf::from("README.md")];
    let dir = root.join("docs");
    let mut md: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .filter_map(|p| p.file_name().map(|n| Path::new("docs").join(n)))
        .collect();
    md.sort();
    files.extend(md);
    files
        .into_iter()
        .map(|rel| {
            let text = std::fs::read_to_string(root.join(&rel))
                .map_err(|e| anyhow::anyhow!("{}: {e}", root.join(&rel).display()))?;
            Ok((rel.display().to_string(), text))
        })
        .collect()
}

/// The checks (`config`, `yaml`, …) the registries hold codes of.
fn checks_of(codes: &[(&'static str, Code)]) -> BTreeSet<&'static str> {
    codes.iter().map(|(_, c)| c.check()).collect()
}

/// Every code named in backticks in a table row of `docs`, with where: `file:line`.
pub fn documented(
    docs: &[(String, String)],
    checks: &BTreeSet<&str>,
) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (file, text) in docs {
        for (i, line) in text.lines().enumerate() {
            let Some(row) = table_row(line) else {
                continue;
            };
            for name in backticked(row) {
                let known = infx_report::check_of(name);
                if checks.contains(known) && infx_report::is_code_name(name) {
                    out.entry(name.to_string())
                        .or_default()
                        .push(format!("{file}:{}", i + 1));
                }
            }
        }
    }
    out
}

/// The cells of a Markdown table row (after its leading `|`), `None` for any other line.
fn table_row(line: &str) -> Option<&str> {
    line.trim_start().strip_prefix('|')
}

/// The texts between pairs of backticks.
fn backticked(row: &str) -> impl Iterator<Item = &str> {
    row.split('`').skip(1).step_by(2)
}

/// One row on which the registries and the docs disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    /// Registered, but no code table names it.
    Undocumented { krate: &'static str, code: Code },
    /// Named in a code table (at these places), but in no registry.
    Unregistered { name: String, at: Vec<String> },
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Drift::Undocumented { krate, code } => write!(
                f,
                "registered, not documented: {}  {}  {}  {}",
                code,
                code.severity(),
                krate,
                code.summary()
            ),
            Drift::Unregistered { name, at } => {
                write!(f, "documented, not registered: {name}  ({})", at.join(", "))
            }
        }
    }
}

/// The drift between the registered `codes` and the `documented` ones, registry side first.
pub fn compare(
    codes: &[(&'static str, Code)],
    documented: &BTreeMap<String, Vec<String>>,
) -> Vec<Drift> {
    let registered: BTreeSet<&str> = codes.iter().map(|(_, c)| c.as_str()).collect();
    let mut out: Vec<Drift> = codes
        .iter()
        .filter(|(_, c)| !documented.contains_key(c.as_str()))
        .map(|(krate, code)| Drift::Undocumented { krate, code: *code })
        .collect();
    out.extend(
        documented
            .iter()
            .filter(|(name, _)| !registered.contains(name.as_str()))
            .map(|(name, at)| Drift::Unregistered {
                name: name.clone(),
                at: at.clone(),
            }),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const C2: Code = Code::error("config/C2", "concurrency twice");
    const C3: Code = Code::error("config/C3", "half a range");

    fn docs(text: &str) -> Vec<(String, String)> {
        vec![("docs/config.md".to_string(), text.to_string())]
    }

    #[test]
    fn only_table_rows_document_a_code() {
        let checks = BTreeSet::from(["config"]);
        let found = documented(
            &docs(
                "| code | meaning |\n|---|---|\n| `config/C2` | see `config/L1` |\nprose `config/C3`\n| `docs/x.md` | a path |\n",
            ),
            &checks,
        );
        // not a code: the names as the docs write them
        let names: Vec<&str> = found.keys().map(String::as_str).collect();
        assert_eq!(names, ["config/C2", "config/L1"]); // not a code: text
        assert_eq!(found["config/C2"], ["docs/config.md:3"]); // not a code: text
    }

    #[test]
    fn drift_is_reported_both_ways() {
        let checks = BTreeSet::from(["config"]);
        let found = documented(&docs("| `config/C2`, `config/C9` | x |\n"), &checks);
        let drift = compare(&[("infx-config", C2), ("infx-config", C3)], &found);
        assert_eq!(
            drift,
            [
                Drift::Undocumented {
                    krate: "infx-config",
                    code: C3
                },
                Drift::Unregistered {
                    name: "config/C9".into(), // not a code: a name no registry of the test holds
                    at: vec!["docs/config.md:1".into()]
                },
            ]
        );
        assert_eq!(
            drift[0].to_string(),
            "registered, not documented: config/C3  error  infx-config  half a range"
        );
        assert!(
            compare(
                &[("infx-config", C2)],
                &documented(&docs("| `config/C2` |\n"), &checks)
            )
            .is_empty()
        );
    }

    #[test]
    fn the_table_has_one_aligned_row_per_code() {
        let t = table(&[("infx-config", C2), ("infx-config", C3)]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("CODE       SEVERITY"), "{t}");
        assert_eq!(
            lines[1],
            "config/C2  error     infx-config     concurrency twice"
        );
    }
}
