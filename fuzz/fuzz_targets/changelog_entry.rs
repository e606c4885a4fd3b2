//! Changelog parsing (the whole file and appended entries) never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

// The body is shared with the stable corpus replay (xtask/tests/fuzz_corpus.rs).
#[path = "../bodies.rs"]
#[allow(dead_code)]
mod bodies;

fuzz_target!(|data: &[u8]| bodies::changelog_entry(data));
