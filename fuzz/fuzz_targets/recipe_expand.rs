//! Recipe parsing, variant expansion, schema validation and rendering never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

// The body is shared with the stable corpus replay (xtask/tests/fuzz_corpus.rs).
#[path = "../bodies.rs"]
#[allow(dead_code)]
mod bodies;

fuzz_target!(|data: &[u8]| bodies::recipe_expand(data));
