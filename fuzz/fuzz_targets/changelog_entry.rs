//! Changelog parsing (the whole file and appended entries) never panics.
#![no_main]
use infx_changelog::Dialect;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = infx_changelog::parse_changelog(data, "fuzz.yaml", Dialect::Oct);
    if let Ok(text) = std::str::from_utf8(data) {
        let lines: Vec<usize> = (1..=text.lines().count() + 1).collect();
        let _ = infx_changelog::gate::parse_added(text, &lines, Dialect::Oct);
        let _ = infx_changelog::gate::parse_added(text, &lines, Dialect::Aug);
    }
});
