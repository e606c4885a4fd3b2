use infx_yaml::codes;
use infx_yaml::{DuplicateKeys, LoadOptions, ScalarStyle, Value, parse_str, parse_str_with};
use std::path::Path;

fn parse(text: &str) -> Result<infx_yaml::Node, infx_report::Diagnostic> {
    parse_str(Path::new("t.yaml"), text)
}

#[test]
fn scalar_spans_cover_exactly_the_written_text() {
    let text = "a:\n  image: lmsysorg/sglang:v1 # c\n  q: 'x y'\n  d: \"z\"\n";
    let root = parse(text).unwrap();
    let img = root.get_path(&["a", "image"]).unwrap();
    assert_eq!(&text[img.span.byte_range()], "lmsysorg/sglang:v1");
    assert_eq!((img.span.start.line(), img.span.start.col()), (2, 10));
    let q = root.get_path(&["a", "q"]).unwrap();
    assert_eq!(&text[q.span.byte_range()], "'x y'");
    assert_eq!(q.style, ScalarStyle::SingleQuoted);
    let d = root.get_path(&["a", "d"]).unwrap();
    assert_eq!(&text[d.span.byte_range()], "\"z\"");
}

#[test]
fn non_ascii_text_gets_byte_offsets_and_char_columns() {
    let text = "k: \"ü\"\nv: abc\n";
    let root = parse(text).unwrap();
    let v = root.get("v").unwrap();
    assert_eq!(&text[v.span.byte_range()], "abc");
    assert_eq!((v.span.start.line(), v.span.start.col()), (2, 4));
}

#[test]
fn yaml11_types_and_exact_decimal_text() {
    let root =
        parse("a: 1_998_848\nb: 0.80\nc: yes\nd: '1'\ne: ~\nf: 2026-08-01\ng: 1e5\n").unwrap();
    assert_eq!(root.get("a").unwrap().as_i64(), Some(1998848));
    match &root.get("b").unwrap().value {
        Value::Float(f) => assert_eq!((f.value, &*f.text), (0.8, "0.80")),
        other => panic!("{other:?}"),
    }
    assert_eq!(root.get("c").unwrap().as_bool(), Some(true));
    assert_eq!(root.get("d").unwrap().as_str(), Some("1"));
    assert!(root.get("e").unwrap().is_null());
    assert!(matches!(root.get("f").unwrap().value, Value::Timestamp(_)));
    assert_eq!(root.get("g").unwrap().as_str(), Some("1e5"));
}

#[test]
fn merge_keys_follow_pyyaml_order_and_precedence() {
    let text =
        "base: &b {x: 1, y: 2}\nother: &o {y: 9, z: 3}\nm:\n  <<: [*b, *o]\n  z: 4\n  w: 5\n";
    let root = parse(text).unwrap();
    let m = root.get("m").unwrap().as_map().unwrap();
    // PyYAML: later list elements are merged first, earlier ones override; own keys win.
    let keys: Vec<_> = m.keys().collect();
    assert_eq!(keys, ["y", "z", "x", "w"]);
    assert_eq!(m.get("y").unwrap().as_i64(), Some(2));
    assert_eq!(m.get("z").unwrap().as_i64(), Some(4));
}

#[test]
fn merged_key_overridden_by_own_key_is_not_a_duplicate() {
    let root = parse("b: &b {x: 1}\nm:\n  <<: *b\n  x: 2\n").unwrap();
    assert_eq!(root.get_path(&["m", "x"]).unwrap().as_i64(), Some(2));
}

#[test]
fn duplicate_key_is_an_error_with_both_positions() {
    let e = parse("a: 1\nb: 2\na: 3\n").unwrap_err();
    assert_eq!(e.code, codes::DUPLICATE_KEY);
    assert_eq!(e.span.unwrap().start.line(), 3);
    assert!(e.message.contains("first at line 1:1"), "{}", e.message);
    // PyYAML semantics are still available.
    let opts = LoadOptions {
        duplicate_keys: DuplicateKeys::KeepLast,
        ..Default::default()
    };
    let root = parse_str_with(Path::new("t"), "a: 1\na: 3\n", &opts).unwrap();
    assert_eq!(root.get("a").unwrap().as_i64(), Some(3));
}

#[test]
fn pyyaml_load_reports_every_duplicate_and_keeps_the_last_value() {
    let dir = std::env::temp_dir().join(format!("infx-yaml-dup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("dup.yaml");
    // One duplicate in a plain mapping, one overriding an own key beside a merge key.
    std::fs::write(
        &p,
        "a: 1\nb: &b {x: 1}\na: 3\nm:\n  <<: *b\n  y: 1\n  y: 2\n",
    )
    .unwrap();
    let loaded = infx_yaml::load_file_as_pyyaml(&p);
    let lines: Vec<_> = loaded
        .findings
        .iter()
        .map(|d| (d.code, d.span.unwrap().start.line()))
        .collect();
    assert_eq!(
        lines,
        [(codes::DUPLICATE_KEY, 3), (codes::DUPLICATE_KEY, 7)],
        "{:#?}",
        loaded.findings
    );
    let doc = loaded.document.expect("the last-wins document is kept");
    let root = &doc.root;
    assert_eq!(root.get("a").unwrap().as_i64(), Some(3));
    assert_eq!(root.get_path(&["m", "y"]).unwrap().as_i64(), Some(2));
    assert_eq!(root.get_path(&["m", "x"]).unwrap().as_i64(), Some(1));
    // The last value at the first position, as in a Python dict.
    let keys: Vec<_> = root.as_map().unwrap().keys().collect();
    assert_eq!(keys, ["a", "b", "m"]);
    // load_file still fails, with the first one.
    assert_eq!(
        infx_yaml::load_file(&p).unwrap_err().code,
        codes::DUPLICATE_KEY
    );

    // A later syntax error: the duplicate in the mapping closed before it, then the error;
    // no document.
    std::fs::write(&p, "m:\n  a: 1\n  a: 2\nb: [\n").unwrap();
    let loaded = infx_yaml::load_file_as_pyyaml(&p);
    assert!(loaded.document.is_none());
    let codes_seen: Vec<_> = loaded.findings.iter().map(|d| d.code).collect();
    assert_eq!(codes_seen, [codes::DUPLICATE_KEY, codes::SYNTAX]);
    std::fs::remove_dir_all(&dir).ok();
}

/// Mappings close innermost first, so the loader meets the nested duplicate (line 4) before
/// the outer one (line 2); the error names the first in source order.
#[test]
fn reject_names_the_first_duplicate_in_source_order() {
    let text = "a: 1\na:\n  x: 1\n  x: 2\n";
    let e = parse(text).unwrap_err();
    assert_eq!(e.code, codes::DUPLICATE_KEY);
    assert_eq!(e.span.unwrap().start.line(), 2, "{}", e.message);
    assert!(e.message.contains("duplicate key a "), "{}", e.message);
    // parse_str_with has one error to give: under Record it fails as Reject does.
    let record = LoadOptions {
        duplicate_keys: DuplicateKeys::Record,
        ..Default::default()
    };
    let e = parse_str_with(Path::new("t.yaml"), text, &record).unwrap_err();
    assert_eq!(e.span.unwrap().start.line(), 2, "{}", e.message);
    // The other order: the nested one is also first in source order.
    let e = parse("a:\n  x: 1\n  x: 2\na: 1\n").unwrap_err();
    assert!(e.message.contains("duplicate key x "), "{}", e.message);
}

/// A duplicate in a mapping that closed before a syntax error is still the error (the load
/// stopped there before); a syntax error inside the open mapping comes first.
#[test]
fn reject_keeps_a_duplicate_before_a_later_error() {
    let e = parse("m:\n  a: 1\n  a: 2\nb: [\n").unwrap_err();
    assert_eq!(e.code, codes::DUPLICATE_KEY);
    let e = parse("a: 1\na: 2\nb: [\n").unwrap_err();
    assert_eq!(e.code, codes::SYNTAX);
}

/// A file that does not parse still gives the text it was read as (a byte order mark
/// removed: the positions count without it), so its findings can show the source line.
#[test]
fn pyyaml_load_keeps_the_text_of_a_failed_file() {
    let dir = std::env::temp_dir().join(format!("infx-yaml-text-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.yaml");
    std::fs::write(&p, "\u{feff}a: b: c\n").unwrap();
    let loaded = infx_yaml::load_file_as_pyyaml(&p);
    assert!(loaded.document.is_none());
    assert_eq!(loaded.findings[0].code, codes::SYNTAX);
    assert_eq!(loaded.text.as_deref(), Some("a: b: c\n"));
    // A file that parses: the same text as its document's.
    std::fs::write(&p, "a: 1\n").unwrap();
    let loaded = infx_yaml::load_file_as_pyyaml(&p);
    let doc = loaded.document.expect("parses");
    assert_eq!(loaded.text.as_deref(), Some(&*doc.text));
    // Unreadable: no text.
    let loaded = infx_yaml::load_file_as_pyyaml(&dir.join("missing.yaml"));
    assert!(loaded.text.is_none());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn billion_laughs_fails_fast() {
    let mut text = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["b", "c", "d", "e", "f", "g", "h", "i"];
    let mut prev = "a";
    for n in names {
        text.push_str(&format!(
            "{n}: &{n} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
        ));
        prev = n;
    }
    let started = std::time::Instant::now();
    let e = parse(&text).unwrap_err();
    assert_eq!(e.code, codes::ALIAS_BUDGET);
    assert!(started.elapsed().as_secs() < 5);
}

/// Each anchor keeps a copy of what it names: anchors nested around one big list copied it once
/// per anchor (a 200 KB file grew to 3 GB in 19 s). The copies count against the alias budget.
#[test]
fn anchors_nested_around_a_big_list_hit_the_budget() {
    let big = |items: usize| {
        let mut t: String = (0..250).map(|i| format!("&n{i} [")).collect();
        t.push_str(&"1,".repeat(items));
        t.push('1');
        t.push_str(&"]".repeat(250));
        t.push('\n');
        t
    };
    let started = std::time::Instant::now();
    let e = parse(&big(100_000)).unwrap_err();
    assert_eq!(e.code, codes::ALIAS_BUDGET);
    assert!(e.message.contains("anchors"), "{}", e.message);
    assert!(started.elapsed().as_secs() < 5);
    // The same nesting over a small list stays well inside the budget.
    assert!(parse(&big(100)).is_ok());
}

#[test]
fn syntax_errors_have_positions_and_never_panic() {
    for (text, line) in [
        ("a: 'unterminated\nb: 1\n", 1),
        ("a:\n\t- b\n", 2),
        ("a: [1, 2\n", 2),
        ("a: b: c\n", 1),
    ] {
        let e = parse(text).unwrap_err();
        // A tab in indentation is PyYAML's tab rule, at the tab (docs/yaml.md).
        let code = if text.contains('\t') {
            codes::TAB
        } else {
            codes::SYNTAX
        };
        assert_eq!(e.code, code, "{text:?}: {e}");
        let l = e.span.unwrap().start.line();
        assert!(l >= line, "{text:?}: {e}");
    }
}

#[test]
fn non_utf8_file_is_reported_with_position() {
    let dir = std::env::temp_dir().join(format!("infx-yaml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.yaml");
    std::fs::write(&p, b"a: 1\nb: \xff\n").unwrap();
    let e = infx_yaml::load_file(&p).unwrap_err();
    assert_eq!(e.code, codes::ENCODING);
    let s = e.span.unwrap();
    assert_eq!((s.start.line(), s.start.col()), (2, 4));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn unknown_tags_and_multiple_documents_are_rejected() {
    assert_eq!(parse("a: !python/object x\n").unwrap_err().code, codes::TAG);
    assert_eq!(
        parse("a: 1\n---\nb: 2\n").unwrap_err().code,
        codes::MULTI_DOCUMENT
    );
    assert_eq!(
        parse("a: !!str 5\n").unwrap().get("a").unwrap().as_str(),
        Some("5")
    );
    assert!(parse("").unwrap().is_null());
}

proptest::proptest! {
    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
        let _ = parse(&s);
    }
    #[test]
    fn yamlish_text_never_panics(s in "[a-z:\\-\\[\\]{}&*!|>'\" \n\t#,0-9.<]{0,120}") {
        let _ = parse(&s);
    }
}

#[test]
fn block_scalar_at_end_of_file_without_newline() {
    // PyYAML: the last line break is kept only when the source has one.
    let p = std::path::Path::new("t.yaml");
    for (text, want) in [
        ("a: |\n  x\n  y", "x\ny"),
        ("a: |\n  x\n", "x\n"),
        ("a: >\n  x\n  y", "x y"),
        ("a: |\n  x\nb: 1", "x\n"),
    ] {
        let n = infx_yaml::parse_str(p, text).unwrap();
        assert_eq!(n.get("a").and_then(|v| v.as_str()), Some(want), "{text:?}");
    }
}

#[test]
fn quoted_scalar_span_stops_at_the_closing_quote() {
    let text = "image: 'a:b'  # c\nother: \"x\" # d\nplain: v   # e\n";
    let root = parse(text).unwrap();
    for (k, want) in [("image", "'a:b'"), ("other", "\"x\""), ("plain", "v")] {
        let n = root.get(k).unwrap();
        assert_eq!(&text[n.span.byte_range()], want, "{k}");
    }
}

/// Mappings of every length around the point where the loader starts indexing keys (short
/// ones are searched in order, long ones through an index): the same Python-dict semantics.
#[test]
fn short_and_long_mappings_keep_python_dict_semantics() {
    for n in 1..=40usize {
        let mut text: String = (0..n).map(|i| format!("k{i}: {i}\n")).collect();
        // `1`, `1.0` and `true` are one key in a Python dict, whatever the mapping's length.
        text.push_str("1: int\n");
        let root = parse(&text).unwrap();
        let m = root.as_map().unwrap();
        assert_eq!(m.len(), n + 1);
        assert_eq!(m.keys().count(), n, "string keys of {n}");
        for i in 0..n {
            assert_eq!(m.get(&format!("k{i}")).unwrap().as_i64(), Some(i as i64));
        }
        assert!(m.get("1").is_none(), "the int key 1 is not the string '1'");
        for again in ["1.0", "true"] {
            let dup = parse(&format!("{text}{again}: x\n")).unwrap_err();
            assert_eq!(dup.code, codes::DUPLICATE_KEY, "{again} after {n} keys");
            let opts = LoadOptions {
                duplicate_keys: DuplicateKeys::KeepLast,
                ..Default::default()
            };
            let last =
                parse_str_with(Path::new("t.yaml"), &format!("{text}{again}: x\n"), &opts).unwrap();
            let m = last.as_map().unwrap();
            assert_eq!(m.len(), n + 1, "last value wins in place ({n} keys)");
            let (k, v) = m.iter_nodes().last().unwrap();
            assert_eq!(
                (k.span.byte_range().len(), v.as_str()),
                (again.len(), Some("x"))
            );
        }
        let dup = parse(&format!("{text}k0: again\n")).unwrap_err();
        assert_eq!(dup.code, codes::DUPLICATE_KEY, "k0 after {n} keys");
    }
}

#[test]
fn long_mapping_edits_keep_lookups_in_step() {
    let text: String = (0..40).map(|i| format!("k{i}: {i}\n")).collect();
    let mut root = parse(&text).unwrap();
    let short = parse("k1: 1\nk0: 0\n").unwrap();
    let m = root.as_map_mut().unwrap();
    assert_eq!(m.shift_remove("k3").map(|(_, v)| v.as_i64()), Some(Some(3)));
    assert!(m.shift_remove("k3").is_none());
    assert!(!m.contains_key("k3"));
    for i in (0..40).filter(|&i| i != 3) {
        assert_eq!(m.get(&format!("k{i}")).unwrap().as_i64(), Some(i), "k{i}");
    }
    let order: Vec<_> = m.keys().take(5).collect();
    assert_eq!(order, ["k0", "k1", "k2", "k4", "k5"]);
    // Replacing keeps the position; a new key goes last.
    let seven = parse("7").unwrap();
    let key = parse("k5").unwrap();
    m.insert(key.clone(), seven.clone());
    assert_eq!(m.keys().nth(4), Some("k5"));
    assert_eq!(m.get("k5").unwrap().as_i64(), Some(7));
    let new_key = parse("new").unwrap();
    m.insert(new_key, seven);
    assert_eq!(m.keys().last(), Some("new"));
    assert_eq!(m.len(), 40);
    if let Some(v) = m.get_mut("k39") {
        *v = parse("x").unwrap();
    }
    assert_eq!(m.get("k39").unwrap().as_str(), Some("x"));
    // Dict equality ignores order, short or long.
    let a = parse(&text).unwrap();
    let reversed: String = (0..40).rev().map(|i| format!("k{i}: {i}\n")).collect();
    assert_eq!(a, parse(&reversed).unwrap());
    assert_ne!(a, root);
    assert_eq!(short, parse("k0: 0\nk1: 1\n").unwrap());
}

/// A file the run failed to parse is answered from the index with the load's error: it is not
/// read or parsed again (docs/architecture.md, "Parse once"); a path the index does not know
/// is read from disk.
#[test]
fn the_index_answers_a_failed_file_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, "a: [unclosed\n").unwrap();
    let loaded = infx_yaml::load_file_as_pyyaml(&broken);
    assert!(loaded.document.is_none());
    let stop = loaded.findings.last().cloned().unwrap();
    let failures = vec![(broken.clone(), stop.clone())];
    let index = infx_yaml::DocIndex::default().with_failures(&failures);
    // Rewrite the file: an index that read it again would now return a document.
    std::fs::write(&broken, "a: 1\n").unwrap();
    infx_yaml::parse_count::start();
    let again = index.load(&broken);
    let counts = infx_yaml::parse_count::take();
    assert_eq!(again.unwrap_err().to_string(), stop.to_string());
    assert_eq!(counts.get(&broken), None, "{counts:?}");
    // Unknown to the index: read and parsed now.
    let other = dir.path().join("other.yaml");
    std::fs::write(&other, "b: 2\n").unwrap();
    assert!(index.load(&other).is_ok());
}

/// A parse made ahead from a file's bytes ([`infx_yaml::load_bytes_with_previous`]) is the
/// parse the reader would make of the file offered the same previous revision: the sections
/// taken over, the whole file when they cannot be, a byte order mark dropped, and a key
/// written twice reported.
#[test]
fn a_parse_made_ahead_is_the_readers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let previous_text = "a:\n  x: 1\nb:\n  y: [1, 2]\nc: &anchor 3\n";
    let head = infx_yaml::load_file_as_pyyaml(&{
        let p = dir.path().join("head.yaml");
        std::fs::write(&p, previous_text).expect("write");
        p
    })
    .document
    .expect("the previous revision parses");
    let cases: [&[u8]; 4] = [
        b"a:\n  x: 2\nb:\n  y: [1, 2]\nc: &anchor 3\n",
        b"a:\n  x: 1\nb:\n  y: *anchor\nc: &anchor 3\n",
        b"\xef\xbb\xbfa:\n  x: 1\nb:\n  y: [1, 2]\nc: &anchor 3\n",
        b"a:\n  x: 1\n  x: 2\nb:\n  y: [1, 2]\nc: &anchor 3\n",
    ];
    for (i, bytes) in cases.iter().enumerate() {
        let path = dir.path().join(format!("base{i}.yaml"));
        std::fs::write(&path, bytes).expect("write");
        let reuse = infx_yaml::Reuse::default();
        reuse.offer_previous(&path, head.clone());
        let read = infx_yaml::load_file_reusing(&path, Some(&reuse));
        let ahead = infx_yaml::load_bytes_with_previous(&path, bytes.to_vec(), head.clone());
        // Spans too: a node's `PartialEq` compares values only.
        let root = |l: &infx_yaml::Loaded| l.document.as_ref().map(|d| format!("{:?}", d.root));
        assert_eq!(root(&ahead), root(&read), "case {i}");
        assert_eq!(ahead.text, read.text, "case {i}");
        let codes = |l: &infx_yaml::Loaded| -> Vec<String> {
            l.findings
                .iter()
                .map(|d| format!("{} {:?}", d.code, d.span))
                .collect()
        };
        assert_eq!(codes(&ahead), codes(&read), "case {i}");
    }
}
