//! Validation entry points over expanded variants, and the dry-run of a whole file.

use crate::codes;
use crate::recipe::{RecipeFile, RecipeKind, Variant};
use crate::reference::Selector;
use crate::render::{Rendered, render};
use crate::schema1::{self, Failure, dotted};
use crate::source::parent_path;
use infx_report::Diagnostic;

/// Validates one variant: schema 2 when it has a `schema` key, else schema 1 (srtctl c88ef731).
pub fn validate(v: &Variant) -> Vec<Diagnostic> {
    if v.tree.get("schema").is_some() {
        return crate::schema2::validate(v);
    }
    match schema1::load(&v.tree) {
        Ok(_) => Vec::new(),
        Err(f) => failure_diagnostics(v, &f),
    }
}

/// Turns a schema-1 load failure into diagnostics located in the file that set each value.
pub(crate) fn failure_diagnostics(v: &Variant, f: &Failure) -> Vec<Diagnostic> {
    match f {
        Failure::Fields(errs) => errs
            .iter()
            .map(|e| {
                let code = match e.message.as_str() {
                    crate::coerce::UNKNOWN => codes::UNKNOWN_FIELD,
                    crate::coerce::MISSING => codes::MISSING_FIELD,
                    _ => codes::TYPE,
                };
                let mut path = dotted(&e.path);
                if path.ends_with(".value") || path.ends_with(".key") {
                    path = parent_path(&path).to_string();
                }
                let mut d = Diagnostic::error(code, format!("{}: {}", dotted(&e.path), e.message));
                d = match code {
                    codes::UNKNOWN_FIELD => d.with_help(
                        "remove the key or fix its spelling (srtctl rejects unknown keys)",
                    ),
                    codes::MISSING_FIELD => d.with_help("add the required key"),
                    _ if e.message == crate::coerce::NOT_STR
                        && matches!(v.selector, Some(crate::reference::Selector::Zip { .. })) =>
                    {
                        // docs/recipe.md, "Zip variants": quotes do not survive srtctl's re-read.
                        d.with_help(
                            "srtctl re-reads zip variants as YAML 1.1 without quotes, so 'yes'/'on' \
                             become booleans and '8:00:00' an integer; write 08:00:00 or 'true' instead",
                        )
                    }
                    _ if e.message == crate::coerce::NOT_STR => {
                        d.with_help("quote the value: this field takes a string")
                    }
                    _ => d,
                };
                v.locate(&path, e.span, d)
            })
            .collect(),
        Failure::Rule {
            message,
            path,
            span,
        } => vec![v.locate(
            path,
            *span,
            Diagnostic::error(codes::RULE, message.clone()),
        )],
    }
}

/// A plain recipe's `lock:` section that srtctl cannot read (see
/// [`crate::recipe::lock_section_fault`]): srtctl stops before validating anything.
fn lock_diagnostic(v: &Variant, lock: &infx_yaml::Node, why: &str) -> Diagnostic {
    let d = Diagnostic::error(
        codes::TYPE,
        format!("lock: srtctl reads this section as a mapping, and its load fails ({why})"),
    )
    .with_help("make `lock:` the mapping `srtctl` wrote (version, integrity, …), or delete it");
    v.locate("lock", lock.span, d)
}

/// The dry-run of one variant.
#[derive(Debug, Clone)]
pub struct VariantReport {
    pub variant: Variant,
    /// Validation findings (empty = the variant loads).
    pub diagnostics: Vec<Diagnostic>,
    /// Launch commands (rendered for every variant; best read when it validates).
    pub rendered: Rendered,
}

/// Dry-run of a file: expand (srtctl rules), apply the plain-recipe steps (`lock:` removal and,
/// for schema 1, observability expansion), validate and render every variant. Expansion
/// errors (selector naming no variant, zip lengths, …) are returned as `Err`.
pub fn dry_run(
    file: &RecipeFile,
    selector: Option<&Selector>,
) -> Result<Vec<VariantReport>, Diagnostic> {
    Ok(checked_variants(file, selector)?
        .into_iter()
        .map(|(variant, diagnostics)| {
            let rendered = render(&variant);
            VariantReport {
                variant,
                diagnostics,
                rendered,
            }
        })
        .collect())
}

/// [`dry_run`] without the launch commands: every variant srtctl would submit and its
/// findings. Rendering reports nothing, so a check that only needs the findings (validate's
/// recipe step) skips its cost.
pub fn checked_variants(
    file: &RecipeFile,
    selector: Option<&Selector>,
) -> Result<Vec<(Variant, Vec<Diagnostic>)>, Diagnostic> {
    let variants = match file.kind() {
        RecipeKind::Sweep => crate::srtctl::sweep_variants(file),
        _ => file.expand(selector)?,
    };
    Ok(check_each(variants, file.kind() == RecipeKind::Plain))
}

/// [`checked_variants`] of a file the caller no longer needs: a plain recipe's one variant is
/// the file itself, not a copy of it.
pub fn into_checked_variants(
    file: RecipeFile,
    selector: Option<&Selector>,
) -> Result<Vec<(Variant, Vec<Diagnostic>)>, Diagnostic> {
    match file.kind() {
        RecipeKind::Plain => Ok(check_each(vec![file.into_plain_variant()], true)),
        _ => checked_variants(&file, selector),
    }
}

/// A plain recipe's file-level steps: its `lock:` section removed, and its observability
/// variables expanded (`only_schema_1`: when it names no `schema`). The tree is shared with
/// the run's parse of the file, so it is copied only when a step changes it (most change
/// nothing; docs/performance.md).
pub(crate) fn plain_steps(tree: &mut std::sync::Arc<infx_yaml::Node>, only_schema_1: bool) {
    if tree.get("lock").is_some()
        && let Some(m) = std::sync::Arc::make_mut(tree).as_map_mut()
    {
        m.shift_remove("lock");
    }
    if (!only_schema_1 || tree.get("schema").is_none()) && schema1::observability_enabled(tree) {
        schema1::expand_observability(std::sync::Arc::make_mut(tree));
    }
}

/// The plain-recipe steps and validation of every variant.
fn check_each(variants: Vec<Variant>, plain: bool) -> Vec<(Variant, Vec<Diagnostic>)> {
    variants
        .into_iter()
        .map(|mut v| {
            let mut diagnostics = Vec::new();
            if plain {
                if let Some((lock, why)) = crate::recipe::lock_section_fault(&v.tree) {
                    diagnostics.push(lock_diagnostic(&v, lock, &why));
                }
                plain_steps(&mut v.tree, true);
            }
            diagnostics.extend(validate(&v));
            // Only a variant both dry-runs accept can fail later, at launch.
            if diagnostics.is_empty() {
                diagnostics.extend(crate::render::runtime_warnings(&v));
            }
            (v, diagnostics)
        })
        .collect()
}
