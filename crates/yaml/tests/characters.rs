//! PyYAML's reader and scanner rules for characters (docs/yaml.md, "Characters and tabs"):
//! each case is what PyYAML 6 answers for the same text (checked against PyYAML itself by
//! `cargo xtask conformance yaml`), with its message and position.

use infx_yaml::{Value, codes, parse_str};
use std::path::Path;

fn err(text: &str) -> infx_report::Diagnostic {
    parse_str(Path::new("t.yaml"), text).expect_err(text)
}

fn at(text: &str) -> (infx_report::Code, usize, usize, String) {
    let e = err(text);
    let s = e.span.expect("located");
    (e.code, s.start.line(), s.start.col(), e.message)
}

fn loads(text: &str) -> infx_yaml::Node {
    parse_str(Path::new("t.yaml"), text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"))
}

#[test]
fn the_reader_refuses_controls_del_and_c1_anywhere() {
    for (text, hex, line, col) in [
        ("a: a\u{7f}b\n", "007f", 1, 5),
        ("a: 1 # c\u{7f}\n", "007f", 1, 9),
        ("a: 1\nb: \"x\u{0b}\"\n", "000b", 2, 6),
        ("k\u{1b}: 1\n", "001b", 1, 2),
        ("a: |\n  x\u{9f}\n", "009f", 2, 4),
        ("a: [\u{80}]\n", "0080", 1, 5),
        ("a: \u{fffe}\n", "fffe", 1, 4),
    ] {
        let (code, l, c, message) = at(text);
        assert_eq!(code, codes::CHARACTER, "{text:?}");
        assert_eq!((l, c), (line, col), "{text:?}");
        assert_eq!(
            message,
            format!("unacceptable character #x{hex}: special characters are not allowed")
        );
    }
    // Before any syntax error later in the file: the reader checks the whole text first.
    assert_eq!(at("a: [\nb\u{7f}").0, codes::CHARACTER);
    // NBSP, NEL in a quoted scalar, U+FEFF and an escaped DEL are acceptable.
    assert!(
        matches!(loads("a: \"x\u{a0}\\x7f\"\n").get("a").map(|n| &n.value),
        Some(Value::Str(s)) if s == "x\u{a0}\u{7f}")
    );
    loads("a: x\u{feff}y\n");
}

#[test]
fn nel_ls_and_ps_break_lines_as_in_yaml_1_1() {
    // A plain scalar split at column 0: PyYAML's "could not find expected ':'".
    for brk in ['\u{85}', '\u{2028}', '\u{2029}'] {
        let text = format!("a: x{brk}y\n");
        assert_eq!(err(&text).code, codes::SYNTAX, "{text:?}");
        // Indented after the break, the scalar goes on.
        loads(&format!("a: x{brk}  y\n"));
        // A comment ends at the break; what follows is YAML again.
        assert_eq!(
            err(&format!("a: 1 # c{brk}d\n")).code,
            codes::SYNTAX,
            "{brk:?}"
        );
    }
    assert!(matches!(&loads("[a\u{2028}b]").value, Value::Seq(v) if v.len() == 1));
}

#[test]
fn tabs_only_in_quoted_and_block_scalars_and_comments() {
    let tab = "found character '\\t' that cannot start any token";
    for (text, line, col) in [
        ("a: b\tc\n", 1, 5),
        ("a: b\t# c\n", 1, 5),
        ("a: [b,\tc]\n", 1, 7),
        ("a:\tb\n", 1, 3),
        ("a: b\t\n", 1, 5),
        ("a: 1\n\t\nb: 2\n", 2, 1),
        // A tab in indentation: at the tab (the parser said the line before).
        ("a:\n  b: 1\n\tc: 2\n", 3, 1),
        ("- a\n-\tb\n", 2, 2),
        ("a: &x\t1\n", 1, 6),
    ] {
        let (code, l, c, message) = at(text);
        assert_eq!(code, codes::TAB, "{text:?}: {message}");
        assert_eq!((l, c), (line, col), "{text:?}");
        assert!(message.contains(tab), "{message}");
        assert!(
            message.contains("while scanning for the next token"),
            "{message}"
        );
    }
    let (code, l, c, message) = at("a: |\t\n  x\n");
    assert_eq!((code, l, c), (codes::TAB, 1, 5));
    assert!(message.contains("expected chomping or indentation indicators, but found '\\t'"));
    let (_, _, c, message) = at("a: | \t\n  x\n");
    assert_eq!(c, 6);
    assert!(message.contains("expected a comment or a line break, but found '\\t'"));
    for ok in [
        "a: \"x\ty\"\n",
        "a: 'x\ty'\n",
        "a: \"x\n \ty\"\n",
        "a: |\n  x\ty\n",
        "a: >\n  \tx\n",
        "a: 1 #\tc\n",
        "# \tc\na: 1\n",
        "a: | #\tc\n  x\n",
    ] {
        loads(ok);
    }
}

#[test]
fn an_anchor_defined_twice_is_refused_at_the_second() {
    let (code, l, c, message) = at("a: &x 1\nb: &x 2\nc: *x\n");
    assert_eq!((code, l, c), (codes::DUPLICATE_ANCHOR, 2, 4));
    assert!(message.contains("found duplicate anchor 'x'"), "{message}");
    assert!(message.contains("line 1:4"), "{message}");
    let (code, l, _, _) = at("- &x [1]\n- !!str &x a\n");
    assert_eq!((code, l), (codes::DUPLICATE_ANCHOR, 2));
    loads("a: &x 1\nb: &y 2\nc: *x\n");
}
