//! Fixtures the unit tests of several modules share.

use infx_yaml::Document;
use std::path::PathBuf;

/// A document parsed from `text` as if it had been read from `name`.
pub(crate) fn doc(name: &str, text: &str) -> Document {
    let path = PathBuf::from(name);
    let root = infx_yaml::parse_str(&path, text).unwrap();
    Document {
        path,
        text: text.into(),
        root: root.into(),
    }
}
