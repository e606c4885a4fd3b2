//! Manifest media types, the `Accept` header, and reading the platform list of an index.

use crate::reference::Digest;
use std::fmt;

pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";

/// All four manifest types, index types first. Leaving out the list type makes a registry
/// silently answer with the amd64 platform manifest instead (images.md §2.3).
pub const ACCEPT: &str = "application/vnd.oci.image.index.v1+json, \
application/vnd.docker.distribution.manifest.list.v2+json, \
application/vnd.oci.image.manifest.v1+json, \
application/vnd.docker.distribution.manifest.v2+json";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// OCI index or Docker manifest list: multi-platform.
    Index,
    /// A single-platform image manifest.
    Manifest,
    Unknown,
}

pub fn kind_of(media_type: &str) -> Kind {
    // Content-Type may carry parameters (`; charset=utf-8`).
    match media_type.split(';').next().unwrap_or("").trim() {
        OCI_INDEX | DOCKER_LIST => Kind::Index,
        OCI_MANIFEST | DOCKER_MANIFEST => Kind::Manifest,
        _ => Kind::Unknown,
    }
}

/// `os/architecture[/variant]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Platform {
    pub os: String,
    pub architecture: String,
    pub variant: Option<String>,
}

impl Platform {
    pub fn parse(s: &str) -> Option<Platform> {
        let mut it = s.split('/');
        let os = it.next().filter(|x| !x.is_empty())?;
        let arch = it.next().filter(|x| !x.is_empty())?;
        let variant = it.next().map(str::to_string);
        if it.next().is_some() {
            return None;
        }
        Some(Platform {
            os: os.into(),
            architecture: arch.into(),
            variant,
        })
    }

    /// The default required set: linux/amd64 and linux/arm64.
    pub fn defaults() -> Vec<Platform> {
        vec![
            Platform {
                os: "linux".into(),
                architecture: "amd64".into(),
                variant: None,
            },
            Platform {
                os: "linux".into(),
                architecture: "arm64".into(),
                variant: None,
            },
        ]
    }

    /// Does an entry with platform `self` satisfy the requirement `req`? arm64 entries may carry
    /// variant `v8` or none; a requirement without variant accepts any variant.
    pub fn satisfies(&self, req: &Platform) -> bool {
        if self.os != req.os || self.architecture != req.architecture {
            return false;
        }
        match (&req.variant, &self.variant) {
            (None, _) => true,
            (Some(r), Some(v)) => r == v,
            (Some(r), None) => self.architecture == "arm64" && r == "v8",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        if let Some(v) = &self.variant {
            write!(f, "/{v}")?;
        }
        Ok(())
    }
}

/// One entry of an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub media_type: String,
    pub digest: Digest,
    pub platform: Option<Platform>,
}

/// Reads the `manifests` of an index / manifest list. Entries with an unknown media type are
/// kept (image-spec: MUST NOT error on them); `unknown/unknown` attestation entries are kept too
/// and filtered by [`platforms`].
pub fn parse_index(bytes: &[u8]) -> Result<Vec<Entry>, String> {
    let v: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the index is not JSON: {e}"))?;
    let list = v
        .get("manifests")
        .and_then(|m| m.as_array())
        .ok_or("the index has no `manifests` array")?;
    let mut out = Vec::with_capacity(list.len());
    for (i, m) in list.iter().enumerate() {
        let digest = m
            .get("digest")
            .and_then(|d| d.as_str())
            .ok_or_else(|| format!("index entry {i} has no digest"))?;
        let digest = Digest::parse(digest).map_err(|e| format!("index entry {i}: {e}"))?;
        let media_type = m
            .get("mediaType")
            .and_then(|x| x.as_str())
            .unwrap_or("")
            .to_string();
        let platform = m.get("platform").and_then(|p| {
            Some(Platform {
                os: p.get("os")?.as_str()?.to_string(),
                architecture: p.get("architecture")?.as_str()?.to_string(),
                variant: p
                    .get("variant")
                    .and_then(|x| x.as_str())
                    .map(str::to_string),
            })
        });
        out.push(Entry {
            media_type,
            digest,
            platform,
        });
    }
    Ok(out)
}

/// The `mediaType` field of a manifest body, when present.
pub fn body_media_type(bytes: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    v.get("mediaType")?.as_str().map(str::to_string)
}

/// Platforms of the entries, skipping buildx attestations (`unknown/unknown`).
pub fn platforms(entries: &[Entry]) -> Vec<Platform> {
    entries
        .iter()
        .filter_map(|e| e.platform.clone())
        .filter(|p| !(p.os == "unknown" && p.architecture == "unknown"))
        .collect()
}

/// The required platforms not covered by `present`.
pub fn missing_platforms(present: &[Platform], required: &[Platform]) -> Vec<Platform> {
    required
        .iter()
        .filter(|r| !present.iter().any(|p| p.satisfies(r)))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_has_all_four_types() {
        for t in [OCI_INDEX, DOCKER_LIST, OCI_MANIFEST, DOCKER_MANIFEST] {
            assert!(ACCEPT.contains(t), "{t}");
        }
        assert_eq!(
            kind_of("application/vnd.oci.image.index.v1+json; charset=utf-8"),
            Kind::Index
        );
        assert_eq!(kind_of(DOCKER_MANIFEST), Kind::Manifest);
        assert_eq!(kind_of("text/html"), Kind::Unknown);
    }

    #[test]
    fn platform_matching() {
        let arm = Platform::parse("linux/arm64/v8").unwrap();
        let req = Platform::parse("linux/arm64").unwrap();
        assert!(arm.satisfies(&req));
        assert!(Platform::parse("linux/arm64").unwrap().satisfies(&arm));
        assert!(!Platform::parse("linux/amd64").unwrap().satisfies(&req));
        assert_eq!(Platform::parse("linux"), None);
        assert_eq!(Platform::parse("a/b/c/d"), None);
    }

    #[test]
    fn index_platforms_skip_attestations() {
        let d = "sha256:".to_string() + &"a".repeat(64);
        let body = format!(
            r#"{{"manifests":[{{"mediaType":"{OCI_MANIFEST}","digest":"{d}","platform":{{"os":"linux","architecture":"amd64"}}}},
            {{"mediaType":"x/unknown","digest":"{d}","platform":{{"os":"unknown","architecture":"unknown"}}}}]}}"#
        );
        let entries = parse_index(body.as_bytes()).unwrap();
        assert_eq!(entries.len(), 2);
        let p = platforms(&entries);
        assert_eq!(p, vec![Platform::parse("linux/amd64").unwrap()]);
        let miss = missing_platforms(&p, &Platform::defaults());
        assert_eq!(miss, vec![Platform::parse("linux/arm64").unwrap()]);
        assert!(parse_index(b"{}").is_err());
        assert!(parse_index(b"not json").is_err());
    }
}
