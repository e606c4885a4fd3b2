//! The image step of validate: the offline pin rules (pure) and the online registry check.

#[cfg(feature = "registry")]
use crate::client::Client;
use crate::codes;
use crate::reference::Reference;
use crate::sites::ImageSite;
#[cfg(feature = "registry")]
use crate::verify::{self, Finding, VerifyOptions, join};
use infx_report::Diagnostic;

const PIN_HELP: &str = "pin it with `cargo xtask pin <file>`; the form is `<repo>:<tag>@sha256:<64 hex>` with the tag's multi-arch index digest";

/// Offline rules for every site: the reference parses, carries a tag and a well-formed
/// `sha256:<64 lowercase hex>` digest. Codes: `image/malformed`, `image/unpinned`,
/// `image/missing-tag`, `image/digest-algorithm`, `image/unsupported-scalar`.
pub fn check_offline(sites: &[ImageSite]) -> Vec<Diagnostic> {
    check_offline_with(sites, crate::PinPolicy::Required)
}

/// [`check_offline`] under a tree's pin policy: with [`crate::PinPolicy::Verified`] an unpinned
/// reference is the warning `image/tag-only` instead of the error `image/unpinned`
/// (docs/image.md, "Pin policy").
pub fn check_offline_with(sites: &[ImageSite], policy: crate::PinPolicy) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for s in sites {
        let at = |d: Diagnostic| d.at(&s.path, s.span);
        let r = match Reference::parse(&s.written) {
            Ok(r) => r,
            Err(e) => {
                out.push(at(Diagnostic::error(codes::MALFORMED, format!("{}: {e}", s.describe()))
                    .with_help("an image reference reads `[registry/]repository:tag@sha256:<digest>`, repository lowercase")));
                continue;
            }
        };
        match (&r.tag, &r.digest) {
            (_, None) if policy == crate::PinPolicy::Required => out.push(at(Diagnostic::error(
                codes::UNPINNED,
                format!("{} `{}` is not pinned to a digest", s.describe(), s.written),
            )
            .with_help(PIN_HELP))),
            (_, None) => out.push(at(Diagnostic::warning(
                codes::TAG_ONLY,
                format!("{} `{}` is referenced by tag only", s.describe(), s.written),
            )
            .with_help(PIN_HELP))),
            (None, Some(_)) => out.push(at(Diagnostic::error(
                codes::MISSING_TAG,
                format!("{} `{}` has a digest but no tag", s.describe(), s.written),
            )
            .with_help("write the tag the digest was taken from (`repo:<tag>@sha256:…`); the tag tells reviewers which release it is"))),
            (Some(_), Some(d)) if !d.is_sha256() => out.push(at(Diagnostic::error(
                codes::DIGEST_ALGORITHM,
                format!("{} is pinned with a `{}` digest; pins use sha256", s.describe(), d.algorithm),
            )
            .with_help(PIN_HELP))),
            _ => {}
        }
        if s.range.is_none() {
            out.push(at(Diagnostic::warning(
                codes::UNSUPPORTED_SCALAR,
                format!("{} is written in a YAML style `cargo xtask pin` cannot edit byte-exactly", s.describe()),
            )
            .with_help("write the reference as a plain or simply quoted scalar (no escapes, no block scalar)")));
        }
    }
    out
}

/// Offline check of one loaded file: its sites (by file kind, see [`crate::sites::sites_in`]),
/// non-string image fields, and the pin rules of [`check_offline`].
pub fn check_document(doc: &infx_yaml::Document) -> Vec<Diagnostic> {
    let (sites, mut diags) = crate::sites::sites_in(doc);
    diags.extend(check_offline(&sites));
    diags
}

/// The online check (`validate --online`, `pin --check`): every pinned, well-formed reference is
/// verified against its registry (HEAD only unless `opts.deep`). Unpinned or malformed sites are
/// left to [`check_offline`]. Each distinct reference is checked once, `jobs` at a time.
/// Codes: `image/digest-missing`, `image/not-multi-arch`, `image/missing-platform`,
/// `image/tag-moved`, `image/tag-missing` (warning), `image/registry`.
#[cfg(feature = "registry")]
pub fn check_online(
    client: &Client,
    sites: &[ImageSite],
    opts: &VerifyOptions,
    jobs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<Diagnostic> {
    let by_key = verify::per_distinct_reference(
        sites,
        |r| r.digest.is_some().then(|| (r.to_string(), r)),
        jobs,
        progress,
        |r| verify::verify(client, r, opts),
    );
    let mut out = Vec::new();
    for s in sites {
        let Ok(r) = Reference::parse(&s.written) else {
            continue;
        };
        let Some(d) = &r.digest else { continue };
        let Some(result) = by_key.get(r.to_string().as_str()) else {
            continue;
        };
        let at = |x: Diagnostic| x.at(&s.path, s.span);
        let what = s.describe();
        match result {
            Err(e) => out.push(at(Diagnostic::error(
                codes::REGISTRY,
                format!("{what}: could not verify `{}`: {e}", s.written),
            ))),
            Ok(findings) => {
                for f in findings {
                    out.push(at(match f {
                        Finding::DigestMissing => Diagnostic::error(
                            codes::DIGEST_MISSING,
                            format!("{what}: pinned digest {d} no longer exists in {}", r.name()),
                        )
                        .with_help("the content was deleted or the pin names the wrong repository; re-pin with `cargo xtask pin`"),
                        Finding::NotIndex { media_type, tag_now } => Diagnostic::error(
                            codes::NOT_MULTI_ARCH,
                            match tag_now {
                                Some(now) => format!(
                                    "{what}: pinned digest {d} is a platform manifest ({media_type}), not the multi-arch index; tag `{}` points to {now}",
                                    r.tag.as_deref().unwrap_or("")
                                ),
                                None => format!("{what}: pinned digest {d} is a platform manifest ({media_type}), not the multi-arch index"),
                            },
                        )
                        .with_help("pin the tag's index digest (`cargo xtask pin` asks for the index types); a platform digest only runs on one architecture"),
                        Finding::MissingPlatforms { missing, present } => Diagnostic::error(
                            codes::MISSING_PLATFORM,
                            format!("{what}: index {d} lacks {} (it has {})", join(missing), join(present)),
                        )
                        .with_help("use a tag built for every required platform"),
                        Finding::TagMoved { now } => Diagnostic::error(
                            codes::TAG_MOVED,
                            format!("{what}: tag `{}` moved since pinning: it now points to {now}, the pin says {d}", r.tag.as_deref().unwrap_or("")),
                        )
                        .with_help("re-pin with `cargo xtask pin` if the new build is wanted (and add a perf-changelog entry), or fix the tag to the one the pin was taken from"),
                        Finding::TagMissing => Diagnostic::warning(
                            codes::TAG_MISSING,
                            format!("{what}: tag `{}` no longer exists; the pinned content {d} is still available", r.tag.as_deref().unwrap_or("")),
                        )
                        .with_help("update the tag in the reference to one that exists"),
                    }));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sites::master_sites;
    use crate::test_support::doc;

    fn sites(text: &str) -> Vec<ImageSite> {
        master_sites(&doc("configs/nvidia-master.yaml", text)).0
    }

    #[test]
    fn offline_rules() {
        let h = "a".repeat(64);
        let text = format!(
            "ok:\n  image: lmsysorg/sglang:v1@sha256:{h}\nunpinned:\n  image: lmsysorg/sglang:v1\nnotag:\n  image: vllm/vllm-openai@sha256:{h}\nbad:\n  image: Lmsys/Sglang:v1\nshort:\n  image: x/y:v1@sha256:abc\nsha512:\n  image: x/y:v1@sha512:{h}{h}\n"
        );
        let d = check_offline(&sites(&text));
        let got: Vec<_> = d
            .iter()
            .map(|d| (d.code, d.span.map(|s| s.start.line()).unwrap_or(0)))
            .collect();
        assert_eq!(
            got,
            [
                (codes::UNPINNED, 4),
                (codes::MISSING_TAG, 6),
                (codes::MALFORMED, 8),
                (codes::MALFORMED, 10),
                (codes::DIGEST_ALGORITHM, 12)
            ]
        );
        assert!(
            d[0].help
                .as_deref()
                .unwrap_or("")
                .contains("cargo xtask pin")
        );
        assert!(
            d[3].message.ends_with(
                "invalid digest `sha256:abc`: the digest has 3 hex digits; sha256 needs 64"
            ),
            "{}",
            d[3].message
        );
    }

    #[test]
    fn rendered_offline_report() {
        let h = "0123456789abcdef".repeat(4);
        let text = format!(
            "dsr1-fp8-h200-sglang:\n  image: lmsysorg/sglang:v0.5.19-cu130   # unpinned\ngptoss-fp4-b200-vllm:\n  image: vllm/vllm-openai@sha256:{h}\n"
        );
        let doc = doc("configs/nvidia-master.yaml", &text);
        let diags = check_document(&doc);
        let mut sources = infx_report::SourceMap::new();
        sources.insert(&doc.path, text);
        insta::assert_snapshot!(infx_report::render_human(&diags, &sources, false));
    }
}
