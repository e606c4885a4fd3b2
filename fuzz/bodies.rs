//! What each fuzz target does with one input, shared by the targets in `fuzz_targets/` and by
//! `xtask/tests/fuzz_corpus.rs`, which replays the kept corpus (`fuzz/seeds/<target>/` and any
//! crash input kept in `fuzz/artifacts/<target>/`) on stable, without sanitizers, in
//! `cargo xtask test` (docs/security.md, "Fuzzing"). Each function must not panic.

use std::path::Path;

/// `yaml_load`: every input is a tree or a Diagnostic.
pub(crate) fn yaml_load(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = infx_yaml::parse_str(Path::new("fuzz.yaml"), text);
    }
}

/// `recipe_expand`: parsing, variant expansion, schema validation and rendering.
pub(crate) fn recipe_expand(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = infx_recipe::RecipeFile::parse(Path::new("fuzz.yaml"), text.to_owned()) else {
        return;
    };
    if let Ok(variants) = file.expand(None) {
        for v in variants.iter().take(16) {
            let _ = infx_recipe::validate(v);
            let _ = infx_recipe::render(v).to_text();
        }
    }
}

/// `changelog_entry`: the whole file, and the gate's parse of appended entries (both dialects).
pub(crate) fn changelog_entry(data: &[u8]) {
    use infx_changelog::Dialect;
    let _ = infx_changelog::parse_changelog(data, "fuzz.yaml", Dialect::Oct);
    if let Ok(text) = std::str::from_utf8(data) {
        let lines: Vec<usize> = (1..=text.lines().count() + 1).collect();
        let _ = infx_changelog::parse_added(text, &lines, Dialect::Oct);
        let _ = infx_changelog::parse_added(text, &lines, Dialect::Aug);
    }
}

/// `image_reference`: references, digests and platforms parse or fail, and a parsed reference
/// prints to a string that parses to a reference again.
pub(crate) fn image_reference(data: &[u8]) {
    use infx_image::{Digest, Platform, Reference};
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Digest::parse(s);
    let _ = Platform::parse(s);
    if let Ok(r) = Reference::parse(s) {
        let shown = r.to_string();
        let again = Reference::parse(&shown);
        assert!(again.is_ok(), "{shown:?} (from {s:?}) does not parse again");
        let _ = (r.name(), r.tagged(), r.api_host(), r.effective_tag());
    }
}

/// `www_authenticate`: the registry's challenge parser accepts any header value.
pub(crate) fn www_authenticate(data: &[u8]) {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = infx_image::parse_challenge(s);
    }
}
