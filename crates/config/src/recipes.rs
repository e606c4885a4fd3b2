//! SR3/SR4: recipe references checked against disk ([Oct-newest]). Each recipe file is read and
//! parsed at most once per check run.

use crate::codes;
use crate::entry::split_zip;
use crate::model::RecipeRef;
use crate::schema::Ctx;
use infx_yaml::{DocIndex, Document, Node, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub(crate) struct RecipeCache<'a> {
    /// The documents this run already parsed: not read again.
    parsed: &'a DocIndex<'a>,
    files: HashMap<PathBuf, Result<Cow<'a, Document>, String>>,
}

impl<'a> RecipeCache<'a> {
    pub(crate) fn new(parsed: &'a DocIndex<'a>) -> RecipeCache<'a> {
        RecipeCache {
            parsed,
            files: HashMap::new(),
        }
    }
}

/// Checks one reference. `resolved` in `r` is the project-relative path.
pub(crate) fn check_ref(
    ctx: &mut Ctx,
    project_root: &Path,
    r: &RecipeRef,
    cache: &mut RecipeCache<'_>,
) {
    let Some(rel) = r.resolved.as_deref() else {
        return;
    };
    let full = project_root.join(rel);
    // SR3: a symlink may still lead outside the project.
    if let (Ok(canon), Ok(root)) = (infx_fs::canonical(&full), infx_fs::canonical(project_root))
        && !canon.starts_with(&root)
    {
        ctx.error_help(
            codes::SR3,
            r.span,
            "",
            format!(
                "{} resolves outside the project root (to {})",
                rel,
                canon.display()
            ),
            "keep recipes inside the repository; do not link them from elsewhere",
        );
        return;
    }
    if !full.is_file() {
        // A near file name in the same folder (a typo of the file, not of the folder).
        let siblings: Vec<String> = full
            .parent()
            .and_then(|dir| infx_fs::list_dir(dir).ok())
            .unwrap_or_default()
            .iter()
            .filter_map(|p| Some(p.file_name()?.to_str()?.to_string()))
            .collect();
        let name = full.file_name().and_then(|n| n.to_str()).unwrap_or("");
        ctx.error_help(
            codes::SR4,
            r.span,
            "",
            format!("{rel} does not exist"),
            format!(
                "{}check srt-recipe-dir and the file name, or add the recipe",
                infx_report::did_you_mean(name, siblings.iter().map(String::as_str))
            ),
        );
        return;
    }
    let Some(sel) = r.selector.as_deref() else {
        return;
    };
    let parsed = cache.parsed;
    let doc = cache
        .files
        .entry(full.clone())
        .or_insert_with(|| parsed.load(&full).map_err(|d| d.to_string()));
    let doc = match doc {
        Ok(d) => d,
        Err(e) => {
            let msg = format!("{rel} cannot be parsed, so selector '{sel}' cannot be checked");
            let d = ctx.error(codes::SR4, r.span, "", msg);
            d.notes.push(e.clone());
            return;
        }
    };
    let root = &doc.root;
    if !root.as_map().is_some_and(|m| m.contains_key("base")) {
        ctx.error_help(
            codes::SR4,
            r.span,
            "",
            format!("{rel}: only an override bundle with a base takes a selector (':{sel}')"),
            "drop the selector for a plain recipe",
        );
        return;
    }
    if sel == "base" {
        return;
    }
    let found = if let Some(rest) = sel.strip_prefix("zip_override_") {
        split_zip(rest).is_some_and(|(name, i)| {
            root.get(&format!("zip_override_{name}"))
                .is_some_and(|b| i < longest_list(b))
        })
    } else {
        root.get(sel).is_some()
    };
    if !found {
        let mut variants: Vec<&str> = root
            .as_map()
            .map(|m| {
                m.keys()
                    .filter(|k| k.starts_with("override_") || k.starts_with("zip_override_"))
                    .collect()
            })
            .unwrap_or_default();
        variants.sort_unstable();
        ctx.error_help(
            codes::SR4,
            r.span,
            "",
            format!("{rel} has no variant {sel}"),
            format!(
                "{}use one of: base, {}",
                infx_report::did_you_mean(sel, variants.iter().copied()),
                variants.join(", ")
            ),
        );
    }
}

/// Zip length: the longest list found recursively in the block.
fn longest_list(n: &Node) -> usize {
    match &n.value {
        Value::Seq(items) => items
            .len()
            .max(items.iter().map(longest_list).max().unwrap_or(0)),
        Value::Map(m) => m
            .iter_nodes()
            .map(|(_, v)| longest_list(v))
            .max()
            .unwrap_or(0),
        _ => 0,
    }
}
