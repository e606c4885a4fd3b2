//! The YAML loader never panics: every input is a tree or a Diagnostic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = infx_yaml::parse_str(Path::new("fuzz.yaml"), text);
    }
});
