//! `render_sarif` output validates against a SARIF 2.1.0 schema written from the specification
//! (tests/fixtures/sarif-2.1.0-subset.schema.json), and the schema has teeth.

use infx_report::{
    Diagnostic, LineIndex, Pos, Span, acknowledge, allows_in, render_sarif,
    render_sarif_with_acknowledged,
};
use serde_json::Value;

fn schema_check(doc: &Value) -> Result<(), String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sarif-2.1.0-subset.schema.json"
    );
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let schema: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.enable_format_assertions();
    compiler
        .add_resource("sarif.json", schema)
        .map_err(|e| e.to_string())?;
    let idx = compiler
        .compile("sarif.json", &mut schemas)
        .map_err(|e| e.to_string())?;
    schemas.validate(doc, idx).map_err(|e| format!("{e:#}"))
}

fn findings() -> Vec<Diagnostic> {
    let text = "a: 1\nb: ü\na: 3\n";
    let idx = LineIndex::new(text);
    vec![
        Diagnostic::error(
            infx_report::Code::error("yaml/duplicate-key", "a test code"),
            "duplicate key a",
        )
        .at("configs/my file#1.yaml", idx.span(text, 12, 13))
        .with_help("remove one")
        .with_label(idx.span(text, 0, 1), "first defined here"),
        Diagnostic::warning(
            infx_report::Code::warning("matrix/unused-variant", "a test code"),
            "unused\nvariant",
        )
        .at("r.yaml", Span::point(Pos::new(0, 4, 1))),
        Diagnostic::note(
            infx_report::Code::note("change/no-history", "a test code"),
            "outside git",
        )
        .with_note("whole tree"),
        Diagnostic::error(
            infx_report::Code::error("diff/blank-at-eof", "a test code"),
            "blank",
        )
        .at("x.yaml", Span::line(0)),
    ]
}

#[test]
fn sarif_of_mixed_findings_validates() {
    let out = render_sarif(&findings(), "0.1.0");
    let doc: Value = serde_json::from_str(&out).expect("SARIF is JSON");
    schema_check(&doc).unwrap_or_else(|e| panic!("{e}\n{out}"));
    let rules = doc["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert_eq!(rules.len(), 4);
    assert!(rules.iter().all(|r| {
        !r["shortDescription"]["text"]
            .as_str()
            .unwrap_or("")
            .is_empty()
    }));
}

#[test]
fn acknowledged_warnings_validate_as_suppressed_results() {
    let text = "x: 64  # infx: allow(review/dp-cuda-graph) reviewed\n";
    let (allows, problems) = allows_in(std::path::Path::new("r.yaml"), text);
    assert!(problems.is_empty());
    let mut warnings = vec![
        Diagnostic::warning(
            infx_report::Code::warning("review/dp-cuda-graph", "a test code"),
            "batch",
        )
        .at("r.yaml", Span::line(1)),
    ];
    let outcome = acknowledge([&mut warnings], &allows, |_| true);
    assert!(warnings.is_empty());
    let out = render_sarif_with_acknowledged(&findings(), &outcome.acknowledged, "0.1.0");
    let doc: Value = serde_json::from_str(&out).expect("SARIF is JSON");
    schema_check(&doc).unwrap_or_else(|e| panic!("{e}\n{out}"));
    let last = doc["runs"][0]["results"].as_array().and_then(|r| r.last());
    assert_eq!(
        last.map(|r| r["suppressions"][0]["justification"].clone()),
        Some(Value::from("reviewed"))
    );
}

#[test]
fn empty_report_validates() {
    let doc: Value = serde_json::from_str(&render_sarif(&[], "0.1.0")).unwrap();
    schema_check(&doc).unwrap();
    assert_eq!(doc["runs"][0]["results"].as_array().map(Vec::len), Some(0));
}

#[test]
fn the_schema_rejects_what_sarif_forbids() {
    let good: Value = serde_json::from_str(&render_sarif(&findings(), "0.1.0")).unwrap();
    let mut bad_version = good.clone();
    bad_version["version"] = "2.0.0".into();
    let mut bad_level = good.clone();
    bad_level["runs"][0]["results"][0]["level"] = "fatal".into();
    let mut bad_line = good.clone();
    bad_line["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        0.into();
    let mut no_message = good.clone();
    if let Some(r) = no_message["runs"][0]["results"][0].as_object_mut() {
        r.remove("message");
    }
    for (what, doc) in [
        ("version", bad_version),
        ("level", bad_level),
        ("startLine", bad_line),
        ("message", no_message),
    ] {
        assert!(schema_check(&doc).is_err(), "{what} accepted");
    }
}
