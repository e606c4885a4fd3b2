//! Recipe parsing, variant expansion, schema validation and rendering never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
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
});
