//! Image references, digests and platforms parse or fail without panicking, and a parsed
//! reference prints to a string that parses to the same reference.
#![no_main]
use libfuzzer_sys::fuzz_target;

// The body is shared with the stable corpus replay (xtask/tests/fuzz_corpus.rs).
#[path = "../bodies.rs"]
#[allow(dead_code)]
mod bodies;

fuzz_target!(|data: &[u8]| bodies::image_reference(data));
