//! SARIF 2.1.0 output, so a workflow can upload findings to GitHub code scanning and see them
//! inline on the pull request (README, `cargo xtask validate` output formats).

use crate::allow::Acknowledged;
use crate::{Code, Diagnostic, Severity, Span};
use serde_json::{Value, json};

/// One SARIF log with one run: the rule table holds every code seen (in first-seen order), each
/// with its one-line description; results refer to rules by id and index. Columns count Unicode
/// code points, as infx's do, and the run says so (`columnKind`).
pub fn render_sarif(diags: &[Diagnostic], tool_version: &str) -> String {
    render_sarif_with_acknowledged(diags, &[], tool_version)
}

/// [`render_sarif`] plus the acknowledged warnings, each a result with an `inSource`
/// suppression whose justification is the allow comment's reason (code scanning lists them as
/// dismissed, not open).
pub fn render_sarif_with_acknowledged(
    diags: &[Diagnostic],
    acknowledged: &[Acknowledged],
    tool_version: &str,
) -> String {
    let mut rule_ids: Vec<Code> = Vec::new();
    for d in diags
        .iter()
        .chain(acknowledged.iter().map(|a| &a.diagnostic))
    {
        if !rule_ids.contains(&d.code) {
            rule_ids.push(d.code);
        }
    }
    let rules: Vec<Value> = rule_ids
        .iter()
        .map(|code| {
            json!({
                "id": code,
                "shortDescription": { "text": code.summary() },
            })
        })
        .collect();
    let rule_index = |d: &Diagnostic| rule_ids.iter().position(|r| *r == d.code).unwrap_or(0);
    let mut results: Vec<Value> = diags.iter().map(|d| result(d, rule_index(d))).collect();
    for a in acknowledged {
        let mut r = result(&a.diagnostic, rule_index(&a.diagnostic));
        r["suppressions"] = json!([{ "kind": "inSource", "justification": a.reason }]);
        results.push(r);
    }
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "infx",
                "version": tool_version,
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    let mut s = crate::render::json_safe(serde_json::to_string_pretty(&log).unwrap_or_default());
    s.push('\n');
    s
}

fn result(d: &Diagnostic, rule_index: usize) -> Value {
    let level = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    };
    let mut text = d.message.clone();
    if let Some(h) = &d.help {
        text.push_str("\nhelp: ");
        text.push_str(h);
    }
    for n in d.all_notes() {
        text.push_str("\nnote: ");
        text.push_str(&n);
    }
    let mut r = json!({
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": level,
        "message": { "text": text },
    });
    // With a base compared, code scanning shows only the new alerts (`baselineState`); the
    // fingerprint lets it follow a finding across line shifts (docs/baseline.md, "Formats").
    if let Some(state) = d.baseline {
        r["baselineState"] = json!(state.as_str());
    }
    if let Some(fp) = &d.fingerprint {
        r["partialFingerprints"] = json!({ "infxFinding/v1": fp });
    }
    // A finding about the repository as a whole has no file: SARIF allows a result without
    // locations; code scanning lists it without an inline position.
    if let Some(path) = &d.path {
        let uri = uri_of(&path.to_string_lossy());
        r["locations"] = json!([location(&uri, d.span, None)]);
    }
    // Secondary spans in the finding's file, then the folded consequences where they are.
    let mut related: Vec<Value> = Vec::new();
    if let Some(path) = &d.path {
        let uri = uri_of(&path.to_string_lossy());
        for l in &d.labels {
            related.push(location(&uri, Some(l.span), Some(&l.message)));
        }
    }
    for c in &d.consequences {
        if let Some(path) = &c.path {
            let text = format!("caused here: {}[{}]: {}", c.severity, c.code, c.message);
            related.push(location(
                &uri_of(&path.to_string_lossy()),
                c.span,
                Some(&text),
            ));
        }
    }
    if !related.is_empty() {
        for (i, loc) in related.iter_mut().enumerate() {
            loc["id"] = json!(i);
        }
        r["relatedLocations"] = Value::Array(related);
    }
    r
}

fn location(uri: &str, span: Option<Span>, message: Option<&str>) -> Value {
    let mut physical = json!({
        "artifactLocation": { "uri": uri, "uriBaseId": "%SRCROOT%" },
    });
    if let Some(region) = span.and_then(region) {
        physical["region"] = region;
    }
    let mut loc = json!({ "physicalLocation": physical });
    if let Some(m) = message {
        loc["message"] = json!({ "text": m });
    }
    loc
}

/// SARIF regions are 1-based with an exclusive `endColumn`, which is exactly infx's `end` (the
/// position after the last character). Line 0 means "unknown line": no region then.
fn region(span: Span) -> Option<Value> {
    if span.start.line() == 0 {
        return None;
    }
    let mut r = json!({ "startLine": span.start.line() });
    if span.start.col() > 0 {
        r["startColumn"] = json!(span.start.col());
    }
    if span.end.line() > span.start.line()
        || (span.end.line() == span.start.line() && span.end.col() > span.start.col())
    {
        r["endLine"] = json!(span.end.line());
        if span.end.col() > 0 {
            r["endColumn"] = json!(span.end.col());
        }
    }
    Some(r)
}

/// A relative URI reference for a repository path: `/` separators, everything outside the
/// RFC 3986 unreserved set and `/` percent-encoded (a path with a space, `#` or a newline stays
/// one valid URI).
fn uri_of(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.replace('\\', "/").bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LineIndex, Pos};

    #[test]
    fn acknowledged_warnings_are_suppressed_results() {
        let w = Diagnostic::warning(
            crate::Code::warning("review/dp-cuda-graph", "a test code"),
            "batch",
        )
        .at("r.yaml", Span::line(4));
        let ack = Acknowledged {
            diagnostic: w,
            reason: "per-rank batch never exceeds 44".into(),
            allow_span: Span::line(3),
        };
        let e = Diagnostic::error(
            crate::Code::error("image/unpinned", "a test code"),
            "no digest",
        )
        .at("m.yaml", Span::line(1));
        let v: Value =
            serde_json::from_str(&render_sarif_with_acknowledged(&[e], &[ack], "0.1.0")).unwrap();
        let results = v["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert!(results[0].get("suppressions").is_none());
        assert_eq!(results[1]["ruleIndex"], 1);
        assert_eq!(results[1]["suppressions"][0]["kind"], "inSource");
        assert_eq!(
            results[1]["suppressions"][0]["justification"],
            "per-rank batch never exceeds 44"
        );
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(uri_of("configs/a b#c.yaml"), "configs/a%20b%23c.yaml");
        assert_eq!(uri_of("x\ny"), "x%0Ay");
        assert_eq!(uri_of("ü"), "%C3%BC");
    }

    #[test]
    fn one_rule_per_code_and_regions_with_end() {
        let text = "a: 1\na: 2\n";
        let idx = LineIndex::new(text);
        let first = idx.span(text, 0, 1);
        let second = idx.span(text, 5, 6);
        let dup = Diagnostic::error(
            crate::Code::error("yaml/duplicate-key", "a test code"),
            "duplicate key a",
        )
        .at("c.yaml", second)
        .with_label(first, "first defined here");
        let repo = Diagnostic::warning(
            crate::Code::warning("change/x", "a test code"),
            "no history",
        );
        let point = Diagnostic::error(
            crate::Code::error("yaml/duplicate-key", "a test code"),
            "again",
        )
        .at("d.yaml", Span::point(Pos::new(0, 3, 2)));
        let v: Value = serde_json::from_str(&render_sarif(&[dup, repo, point], "0.1.0")).unwrap();
        let run = &v["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0]["id"], "yaml/duplicate-key"); // not a code: the SARIF text
        let r0 = &run["results"][0];
        assert_eq!(r0["ruleIndex"], 0);
        let region = &r0["locations"][0]["physicalLocation"]["region"];
        assert_eq!(
            (
                &region["startLine"],
                &region["startColumn"],
                &region["endLine"],
                &region["endColumn"]
            ),
            (&json!(2), &json!(1), &json!(2), &json!(2))
        );
        assert_eq!(
            r0["relatedLocations"][0]["message"]["text"],
            "first defined here"
        );
        assert!(run["results"][1].get("locations").is_none());
        assert_eq!(run["results"][1]["ruleIndex"], 1);
        assert_eq!(run["results"][1]["level"], "warning");
        let point_region = &run["results"][2]["locations"][0]["physicalLocation"]["region"];
        assert!(point_region.get("endColumn").is_none());
        assert_eq!(point_region["startColumn"], 2);
    }
}
