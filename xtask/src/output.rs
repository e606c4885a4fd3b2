//! Printing diagnostics in the format the user asked for.

use infx_report::{Diagnostic, SourceMap, render_github, render_human, render_json, render_sarif};
use std::io::IsTerminal;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// rustc-like text with the source line and a caret (colours only on a terminal).
    #[default]
    Human,
    /// One JSON object per diagnostic per line (schema in the README).
    Json,
    /// GitHub Actions workflow commands (`::error file=…,line=…,col=…,endColumn=…::`).
    Github,
    /// One SARIF 2.1.0 log (for GitHub code scanning), one rule per diagnostic code.
    Sarif,
}

/// Renders diagnostics to a string in `format`.
pub fn render(diags: &[Diagnostic], sources: &SourceMap, format: Format) -> String {
    match format {
        Format::Human => render_human(diags, sources, use_color()),
        Format::Json => render_json(diags),
        Format::Github => render_github(diags),
        Format::Sarif => render_sarif(diags, env!("CARGO_PKG_VERSION")),
    }
}

/// Colour only on a terminal, and never when NO_COLOR is set.
pub fn use_color() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}

/// Names diagnostics' files relative to the repository holding the benchmark tree `tree`, as
/// validate prints them: a tree-relative or absolute path of an existing file becomes
/// repository-relative; any other path (already repository-relative, or not a file) is kept.
/// A file a diagnostic names under its new path but `sources` lacks is read, so its snippet
/// shows.
pub fn repository_relative(
    tree: &std::path::Path,
    diags: &mut [Diagnostic],
    sources: &mut SourceMap,
) {
    let paths = RepositoryPaths::new(tree);
    for d in diags.iter_mut() {
        let Some(p) = &d.path else { continue };
        let new = paths.shown(p);
        if !sources.contains(&new)
            && let Ok(text) = infx_fs::read_to_string(&paths.repo.join(&new))
        {
            sources.insert(&new, text);
        }
        d.path = Some(new);
    }
}

/// How [`repository_relative`] names the files of a benchmark tree.
pub struct RepositoryPaths {
    repo: std::path::PathBuf,
    tree: std::path::PathBuf,
}

impl RepositoryPaths {
    pub fn new(tree: &std::path::Path) -> RepositoryPaths {
        RepositoryPaths {
            repo: canonical(&crate::paths::repository_root(tree)),
            tree: canonical(tree),
        }
    }

    /// `p` (tree-relative or absolute) relative to the repository when it names an existing
    /// file; any other path as it is.
    pub fn shown(&self, p: &std::path::Path) -> std::path::PathBuf {
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.tree.join(p)
        };
        if !abs.is_file() {
            return p.to_path_buf();
        }
        // `../.github/CODEOWNERS` of a nested tree: named from the repository too.
        let abs = canonical(&abs);
        abs.strip_prefix(&self.repo)
            .map(std::path::Path::to_path_buf)
            .unwrap_or(abs)
    }
}

fn canonical(p: &std::path::Path) -> std::path::PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}
