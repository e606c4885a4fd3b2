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
