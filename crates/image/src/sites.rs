//! Where image references are written: the `image:` field of master-config entries and the
//! container fields of srt-slurm recipes. Each site knows the exact byte range of the reference
//! text, so a pin rewrites only that text.

use crate::codes;
use infx_report::{Diagnostic, Pos, Span};
use infx_yaml::{Document, Node, ScalarStyle, Value};
use std::ops::Range;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SiteKind {
    /// `image:` of master-config entry `config_key`.
    MasterImage { config_key: String },
    /// A recipe container field, by its dotted key path (`base.model.container`).
    RecipeContainer { field: String },
}

/// One written image reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageSite {
    pub path: PathBuf,
    /// The scalar node's span (quotes included).
    pub span: Span,
    /// The reference text inside the quotes; `None` when the scalar cannot be edited byte-exactly
    /// (escapes, block scalars).
    pub range: Option<Range<usize>>,
    /// The reference as written (`nvcr.io#nvidia/…:tag`), i.e. the scalar's value.
    pub written: String,
    pub kind: SiteKind,
}

impl ImageSite {
    /// The reference parses and carries a digest.
    pub fn is_pinned(&self) -> bool {
        crate::Reference::parse(&self.written).is_ok_and(|r| r.digest.is_some())
    }
    /// The reference parses and has no digest: a tag only (docs/image.md, "Pin policy").
    pub fn is_tag_only(&self) -> bool {
        crate::Reference::parse(&self.written).is_ok_and(|r| r.digest.is_none())
    }
    /// `nvidia-master.yaml` entry `dsr1-fp4-…` / recipe field `base.model.container`.
    pub fn describe(&self) -> String {
        match &self.kind {
            SiteKind::MasterImage { config_key } => format!("`{config_key}.image`"),
            SiteKind::RecipeContainer { field } => format!("`{field}`"),
        }
    }
}

/// Sites of a file, by its kind: a file with a master config's name is read as one, everything
/// else as a recipe. By name, because a document's path is as it was read (often absolute);
/// the callers chose the file by its tree role (`infx_config::layout::role`).
pub fn sites_in(doc: &Document) -> (Vec<ImageSite>, Vec<Diagnostic>) {
    if infx_config::layout::has_master_name(&doc.path) {
        master_sites(doc)
    } else {
        recipe_sites(doc)
    }
}

/// `image:` of every top-level entry of a master config.
pub fn master_sites(doc: &Document) -> (Vec<ImageSite>, Vec<Diagnostic>) {
    let mut sites = Vec::new();
    let mut diags = Vec::new();
    for entry in infx_config::entries_in(doc) {
        let key = entry.key;
        let Some(image) = entry.image() else {
            continue;
        };
        match site(
            doc,
            image,
            SiteKind::MasterImage {
                config_key: key.to_string(),
            },
        ) {
            Some(s) => sites.push(s),
            None => diags.push(
                Diagnostic::error(
                    codes::NOT_A_STRING,
                    format!("`{key}.image` must be an image reference string"),
                )
                .at(&doc.path, image.span)
                .with_help("write `image: <repo>:<tag>@sha256:<index digest>`"),
            ),
        }
    }
    dedupe(&mut sites);
    (sites, diags)
}

/// Container fields of a recipe (any depth): `container`, `container_image`, `nginx_container`,
/// and `container: {image: …}`. Cluster aliases (no `/`, `:`, `#` or `@`), absolute paths,
/// `.sqsh` files and templated values are not registry references and are skipped.
pub fn recipe_sites(doc: &Document) -> (Vec<ImageSite>, Vec<Diagnostic>) {
    let mut sites = Vec::new();
    walk(doc, &doc.root, &mut Vec::new(), &mut sites);
    dedupe(&mut sites);
    (sites, Vec::new())
}

/// One step of a path through a recipe: a key or a list index. Kept borrowed while walking, so
/// a path is written out only for a site found (a `String` per key was most of the walk's
/// time; docs/performance.md).
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

fn dotted(path: &[Step<'_>]) -> String {
    let mut out = String::new();
    for (i, step) in path.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        match step {
            Step::Key(k) => out.push_str(k),
            Step::Index(n) => out.push_str(&n.to_string()),
        }
    }
    out
}

fn walk<'a>(doc: &Document, node: &'a Node, path: &mut Vec<Step<'a>>, out: &mut Vec<ImageSite>) {
    match &node.value {
        Value::Map(m) => {
            for (key, _k, v) in m.iter() {
                let parent_is_container =
                    matches!(path.last(), Some(Step::Key(k)) if *k == "container");
                path.push(Step::Key(key));
                let is_field = matches!(key, "container" | "container_image" | "nginx_container")
                    || (key == "image" && parent_is_container);
                if is_field && is_registry_reference(v) {
                    if let Some(s) = site(
                        doc,
                        v,
                        SiteKind::RecipeContainer {
                            field: dotted(path),
                        },
                    ) {
                        out.push(s);
                    }
                } else {
                    walk(doc, v, path, out);
                }
                path.pop();
            }
        }
        Value::Seq(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push(Step::Index(i));
                walk(doc, v, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn is_registry_reference(v: &Node) -> bool {
    let Some(s) = v.as_str() else { return false };
    let s = s.trim();
    !s.is_empty()
        && s.contains(['/', ':', '#', '@'])
        && !s.starts_with(['/', '.', '~', '$'])
        && !s.contains(['{', '}', '$'])
        && !s.ends_with(".sqsh")
}

fn site(doc: &Document, node: &Node, kind: SiteKind) -> Option<ImageSite> {
    let written = node.as_str()?.to_string();
    let mut span = node.span;
    let raw = doc.text.get(span.byte_range()).unwrap_or("");
    let r = span.byte_range();
    let range = match node.style {
        ScalarStyle::Plain if raw == written => Some(r),
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
            // The node span of a quoted scalar may run on over a trailing comment: find the
            // closing quote ourselves.
            let q = if node.style == ScalarStyle::SingleQuoted {
                '\''
            } else {
                '"'
            };
            let close = raw
                .strip_prefix(q)
                .and_then(|inner| inner.find(q).filter(|&c| inner[..c] == written));
            if let Some(c) = close {
                // Trim the span to the quoted scalar (same line: no newline inside).
                span.end = Pos::new(
                    r.start + c + 2,
                    span.start.line(),
                    span.start.col() + raw[..c + 2].chars().count(),
                );
            }
            close.map(|c| r.start + 1..r.start + 1 + c)
        }
        _ => None,
    };
    Some(ImageSite {
        path: doc.path.clone(),
        span,
        range,
        written,
        kind,
    })
}

/// Aliases and merge keys make one written scalar appear several times; keep it once.
fn dedupe(sites: &mut Vec<ImageSite>) {
    let mut seen = std::collections::HashSet::new();
    sites.retain(|s| seen.insert(s.span.byte_range()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::doc;

    #[test]
    fn master_images_with_quotes_and_anchors() {
        let d = doc(
            "configs/nvidia-master.yaml",
            "a:\n  image: lmsysorg/sglang:v1 # c\n  model: m\nb:\n  image: \"nvcr.io#nvidia/x:1\"  # quoted, commented\nc: &x\n  image: 'q/r:2'\nd:\n  <<: *x\ne:\n  image: 5\n",
        );
        let (sites, diags) = master_sites(&d);
        let got: Vec<_> = sites
            .iter()
            .map(|s| (s.written.as_str(), &d.text[s.range.clone().unwrap()]))
            .collect();
        assert_eq!(
            got,
            vec![
                ("lmsysorg/sglang:v1", "lmsysorg/sglang:v1"),
                ("nvcr.io#nvidia/x:1", "nvcr.io#nvidia/x:1"),
                ("q/r:2", "q/r:2")
            ]
        );
        assert_eq!(sites[0].span.start.line(), 2);
        assert_eq!(sites[0].span.start.col(), 10);
        assert_eq!(
            &d.text[sites[1].span.byte_range()],
            "\"nvcr.io#nvidia/x:1\""
        );
        assert_eq!(sites[1].span.end.col(), 10 + 20);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, codes::NOT_A_STRING);
    }

    #[test]
    fn recipe_container_fields() {
        let d = doc(
            "r.yaml",
            "base:\n  model:\n    container: lmsysorg/sglang:dev@sha256:aa\n    path: hf:x\n  identity:\n    container:\n      image: vllm/vllm-openai:v1\n  frontend:\n    nginx_container: nginx:1.27.4\n  benchmark:\n    container_image: my-alias\noverride_x:\n  model:\n    container: /abs/img.sqsh\n  other: {container: {}}\n",
        );
        let (sites, _) = recipe_sites(&d);
        let fields: Vec<_> = sites
            .iter()
            .map(|s| match &s.kind {
                SiteKind::RecipeContainer { field } => field.as_str(),
                SiteKind::MasterImage { .. } => "",
            })
            .collect();
        assert_eq!(
            fields,
            [
                "base.model.container",
                "base.identity.container.image",
                "base.frontend.nginx_container"
            ]
        );
    }
}
