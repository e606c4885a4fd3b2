//! The dialect scan over master configs walks a hostile, deeply nested document without
//! recursion (docs/security.md, "Depth"): it runs on a thread with a 64 KiB stack, where the
//! recursive scan of 3,000 levels overflowed.

use std::path::Path;

#[test]
fn dialect_scan_of_a_deep_document_needs_no_deep_stack() {
    let depth = 3_000;
    let text = format!(
        "k:\n  x:\n    {}{{srt-recipe-dir: d}}\n",
        "- ".repeat(depth)
    );
    // The loader's own limit (infx_yaml::MAX_NESTING_DEPTH) is raised here: this test is about
    // the scan, which must not recurse whatever the loader lets through.
    let opts = infx_yaml::LoadOptions {
        max_depth: 10_000,
        ..Default::default()
    };
    let root = infx_yaml::parse_str_with(Path::new("m.yaml"), &text, &opts).expect("parses");
    let doc = infx_yaml::Document {
        path: "m.yaml".into(),
        text: text.as_str().into(),
        root: root.into(),
    };
    let dialect = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn_scoped(s, || {
                infx_config::detect_dialect(std::slice::from_ref(&doc), None)
            })
            .expect("thread")
            .join()
            .expect("the scan returns")
    });
    // The marker at the bottom was found.
    assert_eq!(dialect, infx_config::Dialect::OctNewest);
}
