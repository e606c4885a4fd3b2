//! Tag → index digest resolution (for pinning) and verification of existing pins
//! (docs/image.md, "Commands": its resolution and verification paragraphs).

use crate::client::{Client, RegistryError};
use crate::manifest::{self, Kind, Platform};
use crate::reference::{Digest, Reference};
use std::fmt;

/// A tag resolved to a verified multi-arch index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub digest: Digest,
    pub media_type: String,
    pub platforms: Vec<Platform>,
}

/// Why a tag could not be pinned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResolveError {
    /// A digest-only reference has no tag to resolve.
    NoTag,
    TagNotFound {
        tag: String,
    },
    /// The tag points at a single-platform manifest, not an index.
    NotMultiArch {
        digest: Digest,
        media_type: String,
    },
    MissingPlatforms {
        digest: Digest,
        missing: Vec<Platform>,
        present: Vec<Platform>,
    },
    Registry(RegistryError),
}

impl From<RegistryError> for ResolveError {
    fn from(e: RegistryError) -> Self {
        ResolveError::Registry(e)
    }
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::NoTag => {
                f.write_str("the reference has a digest but no tag, so there is nothing to resolve")
            }
            ResolveError::TagNotFound { tag } => {
                write!(f, "tag `{tag}` does not exist in the registry")
            }
            ResolveError::NotMultiArch { digest, media_type } => write!(
                f,
                "the tag points at a single-platform manifest ({media_type}, {digest}), not a multi-arch index"
            ),
            ResolveError::MissingPlatforms {
                digest,
                missing,
                present,
            } => write!(
                f,
                "index {digest} lacks {} (it has {})",
                join(missing),
                if present.is_empty() {
                    "no platforms".to_string()
                } else {
                    join(present)
                }
            ),
            ResolveError::Registry(e) => e.fmt(f),
        }
    }
}

pub(crate) fn join(p: &[Platform]) -> String {
    p.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Resolves the reference's tag to its index digest with one GET of the tag (one pull on Docker
/// Hub, like a GET by digest): the digest is the sha256 of the bytes received, and must equal
/// `Docker-Content-Digest` when the registry sends it. Then the body must be an index covering
/// `required`.
pub fn resolve(
    client: &Client,
    r: &Reference,
    required: &[Platform],
) -> Result<Resolved, ResolveError> {
    let tag = r.effective_tag().ok_or(ResolveError::NoTag)?;
    let fetched = client
        .get_manifest(r, tag)?
        .ok_or_else(|| ResolveError::TagNotFound {
            tag: tag.to_string(),
        })?;
    let platforms = index_platforms(
        client,
        r,
        &fetched.digest,
        &fetched.media_type,
        &fetched.bytes,
    )?;
    let missing = manifest::missing_platforms(&platforms, required);
    if !missing.is_empty() {
        return Err(ResolveError::MissingPlatforms {
            digest: fetched.digest,
            missing,
            present: platforms,
        });
    }
    Ok(Resolved {
        digest: fetched.digest,
        media_type: fetched.media_type,
        platforms,
    })
}

/// Platforms of an index, descending into nested indexes (one level).
fn index_platforms(
    client: &Client,
    r: &Reference,
    digest: &Digest,
    media_type: &str,
    bytes: &[u8],
) -> Result<Vec<Platform>, ResolveError> {
    let mt = if media_type.is_empty() {
        manifest::body_media_type(bytes).unwrap_or_default()
    } else {
        media_type.to_string()
    };
    if manifest::kind_of(&mt) != Kind::Index {
        return Err(ResolveError::NotMultiArch {
            digest: digest.clone(),
            media_type: mt,
        });
    }
    let index = manifest::parse_index(bytes).map_err(|detail| RegistryError::Protocol {
        url: client.base_url(r),
        detail,
    })?;
    let mut out = manifest::platforms(&index);
    for e in index
        .manifests()
        .iter()
        .filter(|e| manifest::kind_of(&manifest::entry_media_type(e)) == Kind::Index)
    {
        // parse_index has already checked every entry's digest.
        let Ok(nested_digest) = manifest::entry_digest(e) else {
            continue;
        };
        if let Some(child) = client.get_manifest(r, &nested_digest.to_string())?
            && let Ok(nested) = manifest::parse_index(&child.bytes)
        {
            out.extend(manifest::platforms(&nested));
        }
    }
    Ok(out)
}

/// What verification of a pin found. Empty = the pin is good.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The pinned digest no longer exists (content deleted, or wrong registry/repository).
    DigestMissing,
    /// The pinned digest is a platform manifest, not the index. `tag_now`: what the tag points
    /// to (usually the index the pin should have named); not reported as a moved tag.
    NotIndex {
        media_type: String,
        tag_now: Option<Digest>,
    },
    MissingPlatforms {
        missing: Vec<Platform>,
        present: Vec<Platform>,
    },
    /// The tag now points elsewhere; the pinned content still exists.
    TagMoved { now: Digest },
    /// The tag no longer exists; the pinned content still does.
    TagMissing,
}

#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// Also GET the index (one pull per pin) to verify its bytes and platform list. Without it
    /// only HEAD requests are made (no pull counted on Docker Hub).
    pub deep: bool,
    pub required: Vec<Platform>,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            deep: false,
            required: Platform::defaults(),
        }
    }
}

/// Verifies a pinned reference (it must carry a digest; a tag is checked when present).
pub fn verify(
    client: &Client,
    r: &Reference,
    opts: &VerifyOptions,
) -> Result<Vec<Finding>, RegistryError> {
    let Some(d) = &r.digest else {
        return Err(RegistryError::Protocol {
            url: r.to_string(),
            detail: "not pinned: no digest to verify".into(),
        });
    };
    let mut findings = Vec::new();
    if opts.deep {
        match client.get_manifest(r, &d.to_string())? {
            None => return Ok(vec![Finding::DigestMissing]),
            Some(f) => match index_platforms(client, r, d, &f.media_type, &f.bytes) {
                Ok(present) => {
                    let missing = manifest::missing_platforms(&present, &opts.required);
                    if !missing.is_empty() {
                        findings.push(Finding::MissingPlatforms { missing, present });
                    }
                }
                Err(ResolveError::NotMultiArch { media_type, .. }) => {
                    findings.push(Finding::NotIndex {
                        media_type,
                        tag_now: None,
                    })
                }
                Err(ResolveError::Registry(e)) => return Err(e),
                Err(other) => {
                    return Err(RegistryError::Protocol {
                        url: r.to_string(),
                        detail: other.to_string(),
                    });
                }
            },
        }
    } else {
        match client.head_manifest(r, &d.to_string())? {
            None => return Ok(vec![Finding::DigestMissing]),
            Some(h) => {
                if let Some(hd) = &h.digest
                    && hd != d
                {
                    return Err(RegistryError::Protocol {
                        url: r.to_string(),
                        detail: format!("asked for {d}, the registry answered for {hd}"),
                    });
                }
                if manifest::kind_of(&h.media_type) == Kind::Manifest {
                    findings.push(Finding::NotIndex {
                        media_type: h.media_type,
                        tag_now: None,
                    });
                }
            }
        }
    }
    if let Some(tag) = &r.tag {
        match client.head_manifest(r, tag)? {
            None => findings.push(Finding::TagMissing),
            Some(h) => match h.digest {
                Some(now) if &now != d => {
                    if let Some(Finding::NotIndex { tag_now, .. }) = findings
                        .iter_mut()
                        .find(|f| matches!(f, Finding::NotIndex { .. }))
                    {
                        *tag_now = Some(now);
                    } else {
                        findings.push(Finding::TagMoved { now });
                    }
                }
                Some(_) => {}
                // No header on HEAD: hash the tag's manifest.
                None => {
                    if let Some(f) = client.get_manifest(r, tag)?
                        && &f.digest != d
                    {
                        findings.push(Finding::TagMoved { now: f.digest });
                    }
                }
            },
        }
    }
    Ok(findings)
}

/// Asks the registry once per distinct reference the sites write, `jobs` at a time
/// (`progress` gets the count done and the total). `distinct` gives a parsed reference its key
/// and the reference to ask with, or `None` to leave it out; the answers are keyed alike.
pub(crate) fn per_distinct_reference<R: Send>(
    sites: &[crate::sites::ImageSite],
    distinct: impl Fn(Reference) -> Option<(String, Reference)>,
    jobs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
    ask: impl Fn(&Reference) -> R + Sync,
) -> std::collections::BTreeMap<String, R> {
    let unique: std::collections::BTreeMap<String, Reference> = sites
        .iter()
        .filter_map(|s| Reference::parse(&s.written).ok())
        .filter_map(distinct)
        .collect();
    let refs: Vec<(String, Reference)> = unique.into_iter().collect();
    let total = refs.len();
    let results = infx_report::parallel_map(&refs, jobs, |(_, r)| ask(r), &|n| progress(n, total));
    refs.into_iter().map(|(k, _)| k).zip(results).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written twice, pinned or not, a reference is asked once; the key decides what is
    /// distinct, and a reference `distinct` leaves out is not asked.
    #[test]
    fn each_distinct_reference_is_asked_once_under_its_key() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let h = "a".repeat(64);
        let text = format!(
            "a:\n  image: x/y:v1@sha256:{h}\nb:\n  image: x/y:v1@sha256:{h}\nc:\n  image: x/y:v1\nd:\n  image: x/y:v2\ne:\n  image: Not/Valid:v1\n"
        );
        let doc = crate::test_support::doc("configs/nvidia-master.yaml", &text);
        let (sites, _) = crate::sites::master_sites(&doc);
        let asked = AtomicUsize::new(0);
        let totals = std::sync::Mutex::new(Vec::new());
        let by_tag = per_distinct_reference(
            &sites,
            |r| r.effective_tag().is_some().then(|| (r.tagged(), r)),
            2,
            &|_, total| totals.lock().unwrap().push(total),
            |r| {
                asked.fetch_add(1, Ordering::Relaxed);
                r.tagged()
            },
        );
        assert_eq!(asked.load(Ordering::Relaxed), 2, "{by_tag:?}");
        assert_eq!(*totals.lock().unwrap(), [2, 2]);
        assert!(by_tag.iter().all(|(k, v)| k == v), "{by_tag:?}");
        let pinned = per_distinct_reference(
            &sites,
            |r| r.digest.is_some().then(|| (r.to_string(), r)),
            2,
            &|_, _| {},
            |r| r.digest.clone(),
        );
        assert_eq!(pinned.len(), 1, "{pinned:?}");
        assert!(pinned.values().all(Option::is_some));
    }
}
