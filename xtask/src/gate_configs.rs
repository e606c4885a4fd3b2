//! Gate mode's config step: upstream's gate (process_changelog) loads the master configs with
//! validation on before it generates the planned rows, so a planned entry that breaks a config
//! rule fails the gate. Here every config rule runs on the entries the appended changelog
//! entries select, and its findings are reported as `matrix` reports them: the rule's code at
//! the line in the master file (docs/changelog.md, "Diagnostic codes": gate mode).

use infx_changelog::RevisionInputs;
use infx_report::{Diagnostic, Span};
use std::path::PathBuf;

/// Recipe files are read from the working tree by SR3/SR4, which is not the revision the gate
/// judges; `validate` checks them. X5 (unknown runner label) does not stop generation, as in
/// `matrix` (docs/config.md, "Deliberate differences from upstream").
const NOT_GATE_RULES: &[infx_report::Code] = &[
    infx_config::codes::X5,
    infx_config::codes::SR3,
    infx_config::codes::SR4,
];

/// The error findings of every config rule that fall inside the `planned` entries of `inputs`
/// (the head revision), or outside every entry (file-level and runner-file rules, which stop
/// every generation). Also returns the texts of the files the findings point into, for the
/// report's source excerpts.
pub fn planned_entry_findings(
    inputs: &RevisionInputs,
    planned: &[String],
) -> (Vec<Diagnostic>, Vec<(PathBuf, String)>) {
    let loaded = infx_config::from_documents(
        inputs.masters.clone(),
        inputs.runners.clone(),
        PathBuf::new(),
    );
    // (file path, first line, last line) of every entry, planned or not.
    let extents: Vec<(&std::path::Path, usize, usize, bool)> = loaded
        .views()
        .map(|e| {
            let first = e.key_node.span.start.line();
            (
                e.path(),
                first,
                e.node.span.end.line().max(first),
                planned.iter().any(|p| p == e.key),
            )
        })
        .collect();
    let in_entry = |d: &Diagnostic| -> Option<bool> {
        let (path, span): (&std::path::Path, Span) = (d.path.as_deref()?, d.span?);
        extents
            .iter()
            .find(|(p, first, last, _)| *p == path && (*first..=*last).contains(&span.start.line()))
            .map(|(_, _, _, planned)| *planned)
    };
    let findings: Vec<Diagnostic> = infx_config::check(&loaded)
        .into_iter()
        .filter(|d| d.is_error() && !NOT_GATE_RULES.contains(&d.code))
        .filter(|d| in_entry(d).unwrap_or(true))
        .collect();
    let mut sources = Vec::new();
    for doc in loaded.masters.iter().chain(loaded.runners.as_ref()) {
        if findings
            .iter()
            .any(|d| d.path.as_deref() == Some(doc.path.as_path()))
        {
            sources.push((doc.path.clone(), doc.text.to_string()));
        }
    }
    (findings, sources)
}

/// The master config keys the change's appended entries select (none when the additions do not
/// read as entries: the changelog step reports that).
pub fn planned_keys(
    base: Option<&[u8]>,
    head: &[u8],
    dialect: infx_config::Dialect,
    master: &infx_changelog::MasterKeys,
) -> Vec<String> {
    let Ok(added) = infx_changelog::gate(
        base,
        head,
        infx_changelog::CHANGELOG_PATH,
        dialect,
        Default::default(),
    ) else {
        return Vec::new();
    };
    let mut keys: Vec<String> = Vec::new();
    for e in &added.entries {
        for k in infx_changelog::resolve_keys(&e.config_keys, master).unwrap_or_default() {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys
}
