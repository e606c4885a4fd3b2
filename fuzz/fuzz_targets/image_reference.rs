//! Image references, digests and platforms parse or fail without panicking, and a parsed
//! reference prints to a string that parses to the same reference.
#![no_main]
use infx_image::{Digest, Platform, Reference};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
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
});
