//! Fixtures the unit tests of several modules share.

use infx_yaml::{Document, Node};
use std::path::Path;
use std::sync::Arc;

/// The root of `text` parsed as if read from `r.yaml`.
pub(crate) fn parse(text: &str) -> Node {
    parse_at(Path::new("r.yaml"), text)
}

/// A document of `text` as if read from `path`.
pub(crate) fn doc(path: &str, text: &str) -> Document {
    Document {
        path: path.into(),
        text: Arc::from(text),
        root: parse_at(Path::new(path), text).into(),
    }
}

/// A fixture that does not parse fails its test, with the parser's finding.
fn parse_at(path: &Path, text: &str) -> Node {
    match infx_yaml::parse_str(path, text) {
        Ok(n) => n,
        Err(d) => panic!("{d}"),
    }
}
