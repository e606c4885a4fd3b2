//! The WWW-Authenticate parser accepts any header value without panicking.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = infx_image::client::parse_challenge(s);
    }
});
