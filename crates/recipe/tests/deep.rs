//! A hostile fragment nested far deeper than any recipe: the fragment check walks it without
//! recursion (docs/security.md, "Depth"). The check runs on a thread with a 64 KiB stack, where
//! the recursive walk (about 640 bytes a level) overflowed well before the 250 levels used here,
//! just under the loader's own limit (infx_yaml::MAX_NESTING_DEPTH).

use infx_recipe::codes;
use infx_recipe::{Lane, RecipeFile, check_fragment};
use std::path::Path;

const DEPTH: usize = 250;

/// Block sequences nested `depth` levels on one line (`- - - leaf`): 2 bytes a level.
fn nested(depth: usize, leaf: &str) -> String {
    format!("{}{leaf}\n", "- ".repeat(depth))
}

#[test]
fn dram_check_of_a_deep_fragment_needs_no_deep_stack() {
    let text = format!(
        "name: deep\nresources:\n  {}",
        nested(DEPTH, "{cpu_bytes_to_use: 64}")
    );
    let f = RecipeFile::parse(Path::new("deep.yaml"), text).expect("parses");
    let diags = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn_scoped(s, || check_fragment(&f, Lane::AgenticSingle))
            .expect("thread")
            .join()
            .expect("the check returns")
    });
    // The one offending key at the bottom, with its full key path.
    let dram: Vec<_> = diags.iter().filter(|d| d.code == codes::DRAM_REF).collect();
    assert_eq!(dram.len(), 1, "{diags:?}");
    let want = format!("resources{}.cpu_bytes_to_use", "[0]".repeat(DEPTH));
    assert!(
        dram[0].message.starts_with(&want),
        "{}",
        &dram[0].message[..80]
    );
}
