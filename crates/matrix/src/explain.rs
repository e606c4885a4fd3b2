//! The root causes of the binder's findings, named from its typed faults ([`BindReport`]'s
//! `lane_faults`, `point_faults` and `unused`), never from message text (docs/matrix.md,
//! "Binding"): a lane-block value that fails every variant written for a point, a variant that
//! pins no CONC, two variants with the same CONC.

use crate::bind::{BindReport, LaneFault, PointFault};
use infx_recipe::RecipeFile;
use infx_report::Diagnostic;
use std::borrow::Cow;
use std::collections::HashSet;

/// What the binder knows about one of its findings.
#[derive(Clone)]
enum Tag {
    Point(PointFault),
    Unused { recipe: String, label: String },
    None,
}

/// The binder's findings with their root causes named: `fold_lane_faults`, then
/// `explain_root_causes`. `file` gives a recipe file by its reference.
pub fn explain<'f>(
    report: BindReport,
    file: &dyn Fn(&str) -> Option<Cow<'f, RecipeFile>>,
) -> Vec<Diagnostic> {
    let mut tags = vec![Tag::None; report.diagnostics.len()];
    for f in report.point_faults {
        let i = f.diagnostic;
        if let Some(t) = tags.get_mut(i) {
            *t = Tag::Point(f);
        }
    }
    for u in report.unused {
        if let Some(t) = tags.get_mut(u.diagnostic) {
            *t = Tag::Unused {
                recipe: u.recipe,
                label: u.label,
            };
        }
    }
    let tagged: Vec<(Diagnostic, Tag)> = report.diagnostics.into_iter().zip(tags).collect();
    let tagged = fold_lane_faults(tagged, &report.lane_faults);
    explain_root_causes(tagged, file)
}

/// One finding per lane-block cause (docs/matrix.md, binding): a value of the lane block that
/// fails every candidate variant of a point is one `matrix/lane-block-value` error at that
/// value; the `binding-none` errors of those points and the `unused-variant` warnings of their
/// candidate variants (unused only because of it) are folded into it as notes.
fn fold_lane_faults(diags: Vec<(Diagnostic, Tag)>, faults: &[LaneFault]) -> Vec<(Diagnostic, Tag)> {
    if faults.is_empty() {
        return diags;
    }
    // (block, field, span) → the faults it causes, in point order.
    let mut causes: Vec<(&LaneFault, Vec<usize>)> = Vec::new();
    for f in faults {
        match causes.iter_mut().find(|(c, _)| {
            (c.block.as_path(), c.field.as_str(), c.span)
                == (f.block.as_path(), f.field.as_str(), f.span)
        }) {
            Some((_, points)) => points.push(f.diagnostic),
            None => causes.push((f, vec![f.diagnostic])),
        }
    }
    let mut slots: Vec<Option<(Diagnostic, Tag)>> = diags.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for (first, points) in causes {
        let reason = &first.reason;
        let n = points.len();
        let mut cause = Diagnostic::error(
            crate::codes::LANE_BLOCK_VALUE,
            format!(
                "`{}` of this lane block makes {n} point{} match no recipe variant: {reason}",
                first.field,
                if n == 1 { "" } else { "s" }
            ),
        )
        .at(&first.block, first.span)
        .with_help(format!(
            "fix `{}` here: no fragment of the lane sets it, so every variant inherits this value",
            first.field
        ));
        let unused: Vec<(&str, &str)> = faults
            .iter()
            .filter(|f| points.contains(&f.diagnostic))
            .flat_map(|f| f.candidates.iter().map(|l| (f.recipe.as_str(), l.as_str())))
            .collect();
        for i in &points {
            if let Some((d, _)) = slots.get_mut(*i).and_then(Option::take) {
                cause = cause.fold(d);
            }
        }
        for slot in slots.iter_mut() {
            let is_consequence = slot.as_ref().is_some_and(|(_, tag)| {
                unused
                    .iter()
                    .any(|(recipe, label)| is_unused_warning(tag, recipe, label))
            });
            if is_consequence && let Some((d, _)) = slot.take() {
                cause = cause.fold(d);
            }
        }
        out.push((cause, Tag::None));
    }
    let mut rest: Vec<(Diagnostic, Tag)> = slots.into_iter().flatten().collect();
    rest.extend(out);
    rest
}

/// One ambiguity or no-match finding: the recipe reference, the variants the point matched and
/// the point's conc.
struct BindingFault {
    recipe: String,
    matched: Vec<String>,
    conc: Option<String>,
}

fn read_fault(tag: &Tag) -> Option<BindingFault> {
    let Tag::Point(f) = tag else {
        return None;
    };
    Some(BindingFault {
        recipe: f.recipe.clone(),
        matched: f.matched().map(str::to_string).collect(),
        conc: f.conc.clone(),
    })
}

/// The CONC a variant was written for, from its name (`override_tp2_c24` → 24).
fn conc_in_name(label: &str) -> Option<String> {
    let digits: String = label
        .rsplit_once("_c")?
        .1
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (!digits.is_empty() && label.ends_with(&digits)).then_some(digits)
}

/// Names the root cause of binding findings in a recipe instead of their symptoms
/// (docs/matrix.md, binding): a variant that pins no `benchmark.env.CONC` matches every point
/// its parallelism fits, and two variants with the same CONC both match that point; each is
/// one error at the variant's recipe line, replacing the ambiguity errors it explains (and the
/// no-match error of the point the copied variant's name says it serves). A variant some
/// point matches, even ambiguously, is not "unused".
fn explain_root_causes<'f>(
    tagged: Vec<(Diagnostic, Tag)>,
    file: &dyn Fn(&str) -> Option<Cow<'f, RecipeFile>>,
) -> Vec<Diagnostic> {
    let faults: Vec<Option<BindingFault>> = tagged.iter().map(|(_, t)| read_fault(t)).collect();
    let mut matched_somewhere: HashSet<(String, String)> = Default::default();
    for f in faults.iter().flatten() {
        for l in &f.matched {
            matched_somewhere.insert((f.recipe.clone(), l.clone()));
        }
    }
    let mut drop = vec![false; tagged.len()];
    let mut causes = Vec::new();
    let mut recipes: Vec<&str> = faults
        .iter()
        .flatten()
        .filter(|f| f.matched.len() > 1)
        .map(|f| f.recipe.as_str())
        .collect();
    recipes.sort_unstable();
    recipes.dedup();
    for rel in recipes {
        let Some(file) = file(rel) else {
            continue;
        };
        let Some(map) = file.root.as_map() else {
            continue;
        };
        let conc_node = |label: &str| {
            map.get(label)
                .and_then(|v| v.get("benchmark"))
                .and_then(|b| b.get("env"))
                .and_then(|e| e.get("CONC"))
        };
        let in_file = |label: &str| map.get_entry(label).is_some();
        // Ambiguities of this recipe, by index.
        let amb: Vec<(usize, &BindingFault)> = faults
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().map(|f| (i, f)))
            .filter(|(_, f)| f.recipe == rel && f.matched.len() > 1)
            .collect();
        // A variant without CONC whose siblings pin theirs.
        let mut unpinned: Vec<&str> = amb
            .iter()
            .flat_map(|(_, f)| f.matched.iter().map(String::as_str))
            .filter(|l| in_file(l) && conc_node(l).is_none())
            .collect();
        unpinned.sort_unstable();
        unpinned.dedup();
        for label in unpinned {
            let explained: Vec<usize> = amb
                .iter()
                .filter(|(_, f)| f.matched.iter().any(|m| m == label))
                .map(|(i, _)| *i)
                .collect();
            let concs: Vec<String> = explained
                .iter()
                .filter_map(|i| faults[*i].as_ref().and_then(|f| f.conc.clone()))
                .collect();
            let span = map.get_entry(label).map(|(k, _)| k.span);
            let d = variant_without_conc(rel, label, &concs, span);
            causes.push(d);
            for i in explained {
                drop[i] = true;
            }
        }
        // Two variants with the same CONC.
        for (i, f) in &amb {
            if drop[*i] || f.matched.len() != 2 {
                continue;
            }
            let (a, b) = (&f.matched[0], &f.matched[1]);
            let text = |l: &str| {
                conc_node(l).and_then(|n| {
                    n.as_str()
                        .map(str::to_string)
                        .or_else(|| n.as_i64().map(|v| v.to_string()))
                })
            };
            let (Some(ca), Some(cb)) = (text(a), text(b)) else {
                continue;
            };
            if ca != cb {
                continue;
            }
            // The copy is the one whose name disagrees with its CONC; else the later one.
            let name_differs = |l: &str, c: &str| conc_in_name(l).is_some_and(|n| n != c);
            let offset = |l: &str| map.get_entry(l).map(|(k, _)| k.span.start.offset());
            let (copy, other) = match (name_differs(a, &ca), name_differs(b, &cb)) {
                (true, false) => (a, b),
                (false, true) => (b, a),
                _ if offset(b) >= offset(a) => (b, a),
                _ => (a, b),
            };
            let named = conc_in_name(copy).filter(|n| *n != ca);
            let span = conc_node(copy).map(|n| n.span);
            let d = duplicate_conc(rel, (copy, other), &ca, named.as_deref(), span);
            causes.push(d);
            drop[*i] = true;
            // The point the copy was written for finds no variant: the same fault.
            if let Some(n) = &named {
                for (j, g) in faults.iter().enumerate() {
                    if let Some(g) = g
                        && g.recipe == rel
                        && g.matched.is_empty()
                        && g.conc.as_deref() == Some(n.as_str())
                        && tagged[j].0.code == crate::codes::BINDING_NONE
                    {
                        drop[j] = true;
                    }
                }
            }
        }
    }
    let mut out: Vec<Diagnostic> = tagged
        .into_iter()
        .zip(drop)
        .filter(|((_, tag), dropped)| !(*dropped || unused_but_matched(tag, &matched_somewhere)))
        .map(|((d, _), _)| d)
        .collect();
    out.extend(causes);
    out
}

/// `matrix/variant-without-conc`: `label` pins no CONC, so the points at `concs` match it and
/// another variant.
fn variant_without_conc(
    rel: &str,
    label: &str,
    concs: &[String],
    span: Option<infx_report::Span>,
) -> Diagnostic {
    let one = concs.len() == 1;
    let d = Diagnostic::error(
        crate::codes::VARIANT_WITHOUT_CONC,
        format!(
            "variant {label} pins no CONC, so it matches every point its other settings fit: {} point{} (conc {}) match{} it and another variant",
            concs.len(),
            if one { "" } else { "s" },
            concs.join(", "),
            if one { "es" } else { "" },
        ),
    )
    .with_path(rel)
    .with_help(match conc_in_name(label) {
        Some(n) => format!("add `CONC: \"{n}\"` to {label}'s benchmark.env (its name says c{n})"),
        None => format!("add the CONC of the point {label} was written for to its benchmark.env"),
    });
    match span {
        Some(span) => d.with_span(span),
        None => d,
    }
}

/// `matrix/duplicate-conc`: `copy` pins the same CONC `conc` as `other`; `named` is the conc
/// the copy's name says it serves, when that differs.
fn duplicate_conc(
    rel: &str,
    (copy, other): (&str, &str),
    conc: &str,
    named: Option<&str>,
    span: Option<infx_report::Span>,
) -> Diagnostic {
    let d = Diagnostic::error(
        crate::codes::DUPLICATE_CONC,
        format!(
            "{copy} pins CONC {conc}, the same as {other}: the conc {conc} point matches both{}",
            named
                .map(|n| format!(", and no variant serves conc {n}"))
                .unwrap_or_default()
        ),
    )
    .with_path(rel)
    .with_help(match named {
        Some(n) => format!("set `CONC: \"{n}\"` in {copy} (its name says c{n})"),
        None => "give each variant the CONC of the point it serves".to_string(),
    });
    match span {
        Some(span) => d.with_span(span),
        None => d,
    }
}

/// An `unused-variant` warning about a variant some point matched (ambiguously).
fn unused_but_matched(tag: &Tag, matched: &HashSet<(String, String)>) -> bool {
    matched
        .iter()
        .any(|(recipe, label)| is_unused_warning(tag, recipe, label))
}

/// Whether the finding is the binder's `unused-variant` warning about `label` of `recipe`.
fn is_unused_warning(tag: &Tag, recipe: &str, label: &str) -> bool {
    // Compared as paths, as the finding's path is.
    matches!(tag, Tag::Unused { recipe: r, label: l }
        if std::path::Path::new(r) == std::path::Path::new(recipe) && l == label)
}
