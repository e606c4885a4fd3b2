//! The tree's image pin policy (docs/image.md, "Pin policy"): whether every image reference
//! must carry a digest. Stated in one place, `infx.yaml` at the tree's root:
//!
//! ```yaml
//! image-pins: required   # or `verified` (the default when the file or the key is absent)
//! ```
//!
//! `verified`: a pin that exists is checked (malformed, tag/digest mismatch, moved with
//! `--online`); a change that replaces a pinned reference by an unpinned one is an error; an
//! unpinned reference is a warning. `required`: an unpinned reference is an error.

use crate::codes;
use crate::sites::{ImageSite, SiteKind};
use infx_report::{Diagnostic, Span};
use std::collections::HashMap;
use std::path::Path;

/// The policy file, relative to the tree's root.
pub const POLICY_FILE: &str = "infx.yaml";
/// The key that states the pin policy.
const PINS_KEY: &str = "image-pins";

/// Whether the tree requires every image reference to be pinned to a digest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PinPolicy {
    /// Pins that exist are verified; unpinned references are warnings.
    #[default]
    Verified,
    /// Every reference must be pinned.
    Required,
}

impl PinPolicy {
    /// The policy of the tree at `root` and the problems of its policy file (an unreadable or
    /// malformed file is an error, and the stricter policy applies: a typo never loosens it).
    pub fn of_tree(root: &Path) -> (PinPolicy, Vec<Diagnostic>) {
        let path = root.join(POLICY_FILE);
        let text = match infx_fs::read(&path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(t) => t,
                Err(_) => {
                    let d = Diagnostic::error(codes::POLICY, format!("{POLICY_FILE} is not UTF-8"))
                        .with_path(POLICY_FILE);
                    return (PinPolicy::Required, vec![d]);
                }
            },
            Err(e) if e.is_not_found() => return (PinPolicy::Verified, Vec::new()),
            Err(e) => return (PinPolicy::Required, vec![e.to_diagnostic()]),
        };
        PinPolicy::parse(Path::new(POLICY_FILE), &text)
    }

    /// The policy of an already parsed policy file (the whole-tree walk parses every YAML file
    /// once; docs/architecture.md, "Parse once").
    pub fn of_document(doc: &infx_yaml::Document, shown: &Path) -> (PinPolicy, Vec<Diagnostic>) {
        PinPolicy::of_node(shown, &doc.root)
    }

    /// The policy a policy file's text states (`shown` names the file in findings).
    pub fn parse(shown: &Path, text: &str) -> (PinPolicy, Vec<Diagnostic>) {
        match infx_yaml::parse_str(shown, text) {
            Ok(root) => PinPolicy::of_node(shown, &root),
            Err(d) => (PinPolicy::Required, vec![d]),
        }
    }

    fn of_node(shown: &Path, root: &infx_yaml::Node) -> (PinPolicy, Vec<Diagnostic>) {
        let fail = |span: Option<Span>, msg: String| {
            let d = Diagnostic::error(codes::POLICY, msg)
                .with_path(shown)
                .with_help(format!("`{PINS_KEY}: required` or `{PINS_KEY}: verified` (docs/image.md, \"Pin policy\")"));
            let d = match span {
                Some(s) => d.with_span(s),
                None => d,
            };
            (PinPolicy::Required, vec![d])
        };
        if root.is_null() {
            return (PinPolicy::Verified, Vec::new());
        }
        let Some(map) = root.as_map() else {
            return fail(Some(root.span), format!("{POLICY_FILE} must be a mapping"));
        };
        let mut policy = PinPolicy::Verified;
        for (k, v) in map.iter_nodes() {
            match k.as_str() {
                Some(PINS_KEY) => match v.as_str() {
                    Some("required") => policy = PinPolicy::Required,
                    Some("verified") => policy = PinPolicy::Verified,
                    _ => {
                        return fail(
                            Some(v.span),
                            format!("`{PINS_KEY}` is `required` or `verified`"),
                        );
                    }
                },
                _ => {
                    return fail(
                        Some(k.span),
                        format!(
                            "{POLICY_FILE} has no setting `{}`",
                            k.as_str().unwrap_or("?")
                        ),
                    );
                }
            }
        }
        (policy, Vec::new())
    }
}

/// Where a site sits, independent of its line: the file and the config key or recipe field.
fn site_key(s: &ImageSite) -> (&Path, &str) {
    let what = match &s.kind {
        SiteKind::MasterImage { config_key } => config_key.as_str(),
        SiteKind::RecipeContainer { field } => field.as_str(),
    };
    (s.path.as_path(), what)
}

/// Under [`PinPolicy::Verified`]: every site of `head` that is unpinned where the same site
/// (file, config key or recipe field) of `base` was pinned — a change that drops a pin.
pub fn dropped_pins(head: &[ImageSite], base: &[ImageSite]) -> Vec<Diagnostic> {
    // The first pinned base site of each key, looked up: a tree-wide change has thousands of
    // sites on each side (docs/performance.md, "Renames").
    let mut pinned: HashMap<(&Path, &str), &ImageSite> = HashMap::new();
    for b in base.iter().filter(|b| b.is_pinned()) {
        pinned.entry(site_key(b)).or_insert(b);
    }
    head.iter()
        .filter(|h| h.is_tag_only())
        .filter_map(|h| {
            let was = *pinned.get(&site_key(h))?;
            Some(
                Diagnostic::error(
                    codes::PIN_DROPPED,
                    format!(
                        "{} `{}` replaces the pinned `{}`: the change drops the pin",
                        h.describe(),
                        h.written,
                        was.written
                    ),
                )
                .at(&h.path, h.span)
                .with_help("keep the digest: `cargo xtask pin <file>` pins the new tag to its multi-arch index digest"),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_file_states_required_or_verified() {
        let p = Path::new(POLICY_FILE);
        assert_eq!(
            PinPolicy::parse(p, "image-pins: required\n").0,
            PinPolicy::Required
        );
        assert_eq!(
            PinPolicy::parse(p, "image-pins: verified\n").0,
            PinPolicy::Verified
        );
        assert_eq!(PinPolicy::parse(p, "# nothing\n").0, PinPolicy::Verified);
        let (policy, d) = PinPolicy::parse(p, "image-pins: sometimes\n");
        assert_eq!(policy, PinPolicy::Required, "a bad value never loosens");
        assert_eq!(d[0].code, codes::POLICY);
        let (_, d) = PinPolicy::parse(p, "image-pin: required\n");
        assert!(d[0].message.contains("no setting `image-pin`"), "{d:?}");
    }
}
