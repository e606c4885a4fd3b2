//! The nesting limit (`yaml/too-deep`): hostile nesting fails fast with a located error, and
//! nothing that walks a loaded tree can be driven deeper than the limit.

use infx_yaml::codes;
use infx_yaml::{LoadOptions, MAX_NESTING_DEPTH, Value, parse_str, parse_str_with};
use std::path::Path;
use std::time::{Duration, Instant};

const MILLION: usize = 1_000_000;

fn too_deep_within(text: &str, limit: Duration) -> infx_yaml::Span {
    let started = Instant::now();
    let e = parse_str(Path::new("deep.yaml"), text).unwrap_err();
    let took = started.elapsed();
    assert_eq!(e.code, codes::TOO_DEEP, "{e:?}");
    assert!(took < limit, "took {took:?}");
    assert!(e.help.is_some());
    e.span.expect("located")
}

#[test]
fn a_million_flow_levels_fail_fast() {
    let text = format!("{}{}\n", "[".repeat(MILLION), "]".repeat(MILLION));
    let span = too_deep_within(&text, Duration::from_secs(2));
    // The first bracket past the limit is where it is reported.
    assert_eq!(span.start.line(), 1);
    assert_eq!(span.start.col(), MAX_NESTING_DEPTH + 1);
}

#[test]
fn a_million_block_levels_fail_fast() {
    let text = format!("{}x\n", "- ".repeat(MILLION));
    too_deep_within(&text, Duration::from_secs(2));
}

#[test]
fn a_million_unclosed_mappings_fail_fast() {
    let text = format!("{}\n", "{a: ".repeat(MILLION));
    too_deep_within(&text, Duration::from_secs(2));
}

fn nested(levels: usize) -> String {
    format!("{}1{}\n", "[".repeat(levels), "]".repeat(levels))
}

#[test]
fn the_limit_itself_loads_and_one_more_does_not() {
    let root = parse_str(Path::new("ok.yaml"), &nested(MAX_NESTING_DEPTH)).unwrap();
    let mut levels = 0;
    let mut node = &root;
    while let Value::Seq(items) = &node.value {
        levels += 1;
        node = &items[0];
    }
    assert_eq!(levels, MAX_NESTING_DEPTH);
    assert_eq!(node.value, Value::Int(1));
    let e = parse_str(Path::new("deep.yaml"), &nested(MAX_NESTING_DEPTH + 1)).unwrap_err();
    assert_eq!(e.code, codes::TOO_DEEP);
}

#[test]
fn the_limit_holds_for_block_nesting_too() {
    let block = |levels: usize| format!("{}1\n", "- ".repeat(levels));
    assert!(parse_str(Path::new("ok.yaml"), &block(MAX_NESTING_DEPTH)).is_ok());
    let e = parse_str(Path::new("deep.yaml"), &block(MAX_NESTING_DEPTH + 1)).unwrap_err();
    assert_eq!(e.code, codes::TOO_DEEP);
    // Block levels and flow levels add up.
    let mixed = format!("{}{}\n", "- ".repeat(200), nested(100));
    let e = parse_str(Path::new("deep.yaml"), &mixed).unwrap_err();
    assert_eq!(e.code, codes::TOO_DEEP);
}

#[test]
fn the_limit_is_an_option() {
    let opts = LoadOptions {
        max_depth: 3,
        ..LoadOptions::default()
    };
    assert!(parse_str_with(Path::new("t"), "a: {b: [1]}\n", &opts).is_ok());
    let e = parse_str_with(Path::new("t"), "a: {b: [[1]]}\n", &opts).unwrap_err();
    assert_eq!(e.code, codes::TOO_DEEP);
    let span = e.span.unwrap();
    assert_eq!((span.start.line(), span.start.col()), (1, 9));
}

#[test]
fn aliases_count_as_expanded() {
    // Each anchor nests the previous one a level deeper than it was defined: the tree is as deep
    // as its expansion, so that is what the limit counts.
    let opts = LoadOptions {
        max_depth: 10,
        ..LoadOptions::default()
    };
    let ok = "a: &a [[[1]]]\nb: &b [[*a]]\n";
    assert!(parse_str_with(Path::new("t"), ok, &opts).is_ok());
    // The root mapping is level 1, so `d` reaches 1 + 3 + 7 = 11.
    let deep = "a: &a [[[1]]]\nb: &b [[*a]]\nc: &c [[*b]]\nd: [[[*c]]]\n";
    let e = parse_str_with(Path::new("t"), deep, &opts).unwrap_err();
    assert_eq!(e.code, codes::TOO_DEEP);
    assert_eq!(e.span.unwrap().start.line(), 4);
}

#[test]
fn chained_aliases_cannot_build_a_tree_deeper_than_the_limit() {
    // Without the expanded count, 2,000 anchors of 200 levels each would load as a tree 400k
    // levels deep (within the alias budget) and overflow the stack when dropped.
    let mut text = String::from("a0: &a0 [1]\n");
    for i in 1..2000 {
        text.push_str(&format!(
            "a{i}: &a{i} {}*a{}{}\n",
            "[".repeat(200),
            i - 1,
            "]".repeat(200)
        ));
    }
    let e = parse_str(Path::new("t"), &text).unwrap_err();
    assert_eq!(e.code, codes::TOO_DEEP);
}

/// `Drop` of a tree is recursive (derived), one frame per collection level: the depth limit is
/// what bounds it (docs/security.md). At the limit, with mappings and lists mixed, it fits in a
/// quarter of the 2 MiB a spawned thread gets (the loader's parse threads).
#[test]
fn dropping_a_tree_at_the_limit_needs_little_stack() {
    let half = MAX_NESTING_DEPTH / 2;
    let text = format!(
        "{}{}1{}{}\n",
        "{a: ".repeat(half),
        "[".repeat(MAX_NESTING_DEPTH - half),
        "]".repeat(MAX_NESTING_DEPTH - half),
        "}".repeat(half)
    );
    let root = parse_str(Path::new("limit.yaml"), &text).unwrap();
    let dropper = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || drop(root))
        .unwrap();
    assert!(dropper.join().is_ok());
    let e = parse_str(Path::new("deep.yaml"), &format!("[{text}]")).unwrap_err();
    assert_eq!(e.code, codes::TOO_DEEP);
}
