//! Manifest media types, the `Accept` header, and reading the platform list of an index.
//!
//! The image-spec model (index, descriptor, platform, media types) is `oci_spec::image`'s; this
//! module adds what infx needs on top: the Docker schema-2 manifest list read as an OCI index,
//! the platform rule of docs/image.md (variant semantics), and strict digests.

use crate::reference::Digest;
use oci_spec::image::{Arch, Descriptor, ImageIndex, MediaType, Os};
use std::fmt;

pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";

/// All four manifest types, index types first. Leaving out the list type makes a registry
/// silently answer with the amd64 platform manifest instead (docs/image.md).
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
    let bare = media_type.split(';').next().unwrap_or("").trim();
    match MediaType::from(bare) {
        MediaType::ImageIndex => Kind::Index,
        MediaType::ImageManifest => Kind::Manifest,
        // oci-spec names the Docker schema-2 types only as conversions, not as parse results.
        MediaType::Other(_) if bare == DOCKER_LIST => Kind::Index,
        MediaType::Other(_) if bare == DOCKER_MANIFEST => Kind::Manifest,
        _ => Kind::Unknown,
    }
}

/// `os/architecture[/variant]`: a thin wrapper over `oci_spec::image::Platform` that adds
/// parsing of the command-line form and the matching rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Platform(pub oci_spec::image::Platform);

impl Platform {
    pub fn new(os: &str, architecture: &str, variant: Option<&str>) -> Platform {
        let mut p = oci_spec::image::Platform::default();
        p.set_os(Os::from(os));
        p.set_architecture(Arch::from(architecture));
        p.set_variant(variant.map(str::to_string));
        Platform(p)
    }

    pub fn parse(s: &str) -> Option<Platform> {
        let mut it = s.split('/');
        let os = it.next().filter(|x| !x.is_empty())?;
        let arch = it.next().filter(|x| !x.is_empty())?;
        let variant = match it.next() {
            Some("") => return None,
            v => v,
        };
        if it.next().is_some() {
            return None;
        }
        Some(Platform::new(os, arch, variant))
    }

    /// The default required set: linux/amd64 and linux/arm64.
    pub fn defaults() -> Vec<Platform> {
        vec![
            Platform::new("linux", "amd64", None),
            Platform::new("linux", "arm64", None),
        ]
    }

    pub fn os(&self) -> &Os {
        self.0.os()
    }
    pub fn architecture(&self) -> &Arch {
        self.0.architecture()
    }
    pub fn variant(&self) -> Option<&str> {
        self.0.variant().as_deref()
    }

    /// The variant an entry without one means, per the image-spec's platform variants table:
    /// arm64 is v8, arm is v7, amd64 is v1. Other architectures have no default.
    fn effective_variant(&self) -> Option<&str> {
        self.variant().or(match self.architecture() {
            Arch::ARM64 => Some("v8"),
            Arch::ARM => Some("v7"),
            Arch::Amd64 => Some("v1"),
            _ => None,
        })
    }

    /// Does an index entry with platform `self` satisfy the requirement `req`? Variants compare
    /// after filling in the architecture's default (docs/image.md: linux/arm64 is met by an entry
    /// with variant `v8` or none, never by `v7`). A requirement on an architecture without a
    /// default variant and without a variant accepts any variant.
    pub fn satisfies(&self, req: &Platform) -> bool {
        if self.os() != req.os() || self.architecture() != req.architecture() {
            return false;
        }
        match req.effective_variant() {
            None => true,
            Some(want) => self.effective_variant() == Some(want),
        }
    }

    /// buildx attestation entries (`unknown/unknown`) describe no runnable platform.
    fn is_attestation(&self) -> bool {
        matches!(self.os(), Os::Other(o) if o == "unknown")
            && matches!(self.architecture(), Arch::Other(a) if a == "unknown")
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.os(), self.architecture())?;
        if let Some(v) = self.variant() {
            write!(f, "/{v}")?;
        }
        Ok(())
    }
}

/// Reads an OCI image index or a Docker schema-2 manifest list (the same JSON shape: both have
/// `schemaVersion: 2` and `manifests` of descriptors with `mediaType`, `digest`, `size` and an
/// optional `platform`). Entries with an unknown media type are kept (image-spec: MUST NOT error
/// on them); `unknown/unknown` attestation entries are kept too and filtered by [`platforms`].
/// Every entry's digest must also pass the strict grammar of [`Digest::parse`].
pub fn parse_index(bytes: &[u8]) -> Result<ImageIndex, String> {
    let index: ImageIndex = serde_json::from_slice(bytes)
        .map_err(|e| format!("not a valid image index / manifest list: {e}"))?;
    for (i, m) in index.manifests().iter().enumerate() {
        entry_digest(m).map_err(|e| format!("index entry {i}: {e}"))?;
    }
    Ok(index)
}

/// The digest of an index entry, by infx's strict digest grammar.
pub fn entry_digest(entry: &Descriptor) -> Result<Digest, String> {
    Digest::parse(entry.digest().as_ref()).map_err(|e| e.to_string())
}

/// The media type of an index entry as written.
pub fn entry_media_type(entry: &Descriptor) -> String {
    entry.media_type().to_string()
}

/// The `mediaType` field of a manifest body, when present.
pub fn body_media_type(bytes: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    v.get("mediaType")?.as_str().map(str::to_string)
}

/// Platforms of the entries, skipping buildx attestations (`unknown/unknown`).
pub fn platforms(index: &ImageIndex) -> Vec<Platform> {
    index
        .manifests()
        .iter()
        .filter_map(|e| e.platform().clone().map(Platform))
        .filter(|p| !p.is_attestation())
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
    use oci_spec::image::ToDockerV2S2;

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
        assert_eq!(kind_of(DOCKER_LIST), Kind::Index);
        assert_eq!(kind_of("text/html"), Kind::Unknown);
    }

    #[test]
    fn media_type_constants_are_oci_specs() {
        assert_eq!(MediaType::ImageIndex.to_string(), OCI_INDEX);
        assert_eq!(MediaType::ImageManifest.to_string(), OCI_MANIFEST);
        assert_eq!(
            MediaType::ImageIndex.to_docker_v2s2().ok(),
            Some(DOCKER_LIST)
        );
        assert_eq!(
            MediaType::ImageManifest.to_docker_v2s2().ok(),
            Some(DOCKER_MANIFEST)
        );
    }

    fn p(s: &str) -> Platform {
        Platform::parse(s).unwrap()
    }

    #[test]
    fn platform_matching() {
        let req = p("linux/arm64");
        assert!(p("linux/arm64/v8").satisfies(&req));
        assert!(p("linux/arm64").satisfies(&p("linux/arm64/v8")));
        assert!(!p("linux/amd64").satisfies(&req));
        assert!(!p("linux/amd64/v3").satisfies(&p("linux/amd64")));
        assert!(p("linux/s390x").satisfies(&p("linux/s390x")));
        assert_eq!(Platform::parse("linux"), None);
        assert_eq!(Platform::parse("linux/arm64/"), None);
        assert_eq!(Platform::parse("a/b/c/d"), None);
        assert_eq!(p("linux/arm64/v8").to_string(), "linux/arm64/v8");
    }

    #[test]
    fn arm64_v7_is_not_linux_arm64() {
        // image-spec: arm64's variant is v8; a v7 entry is a 32-bit ARM build mislabelled or an
        // armv7 compatibility image, and cannot run where linux/arm64 is required.
        assert!(!p("linux/arm64/v7").satisfies(&p("linux/arm64")));
        assert!(!p("linux/arm64/v7").satisfies(&p("linux/arm64/v8")));
        let d = "sha256:".to_string() + &"b".repeat(64);
        let body = format!(
            r#"{{"schemaVersion":2,"mediaType":"{DOCKER_LIST}","manifests":[
            {{"mediaType":"{DOCKER_MANIFEST}","digest":"{d}","size":1,"platform":{{"os":"linux","architecture":"amd64"}}}},
            {{"mediaType":"{DOCKER_MANIFEST}","digest":"{d}","size":1,"platform":{{"os":"linux","architecture":"arm64","variant":"v7"}}}}]}}"#
        );
        let index = parse_index(body.as_bytes()).unwrap();
        let present = platforms(&index);
        assert_eq!(present.len(), 2);
        assert_eq!(
            missing_platforms(&present, &Platform::defaults()),
            vec![p("linux/arm64")]
        );
    }

    #[test]
    fn index_platforms_skip_attestations() {
        let d = "sha256:".to_string() + &"a".repeat(64);
        let body = format!(
            r#"{{"schemaVersion":2,"manifests":[{{"mediaType":"{OCI_MANIFEST}","digest":"{d}","size":2,"platform":{{"os":"linux","architecture":"amd64"}}}},
            {{"mediaType":"x/unknown","digest":"{d}","size":3,"platform":{{"os":"unknown","architecture":"unknown"}}}}]}}"#
        );
        let index = parse_index(body.as_bytes()).unwrap();
        assert_eq!(index.manifests().len(), 2);
        assert_eq!(entry_media_type(&index.manifests()[1]), "x/unknown");
        let present = platforms(&index);
        assert_eq!(present, vec![p("linux/amd64")]);
        let miss = missing_platforms(&present, &Platform::defaults());
        assert_eq!(miss, vec![p("linux/arm64")]);
        assert!(parse_index(b"{}").is_err());
        assert!(parse_index(b"not json").is_err());
    }

    #[test]
    fn entry_digests_are_checked_strictly() {
        let upper = "sha256:".to_string() + &"A".repeat(64);
        let body = format!(
            r#"{{"schemaVersion":2,"manifests":[{{"mediaType":"{OCI_MANIFEST}","digest":"{upper}","size":2}}]}}"#
        );
        assert!(parse_index(body.as_bytes()).is_err());
        // An algorithm oci-spec takes but the OCI digest grammar does not (uppercase).
        let odd = "Blake3:abcd";
        let body = format!(
            r#"{{"schemaVersion":2,"manifests":[{{"mediaType":"{OCI_MANIFEST}","digest":"{odd}","size":2}}]}}"#
        );
        assert!(parse_index(body.as_bytes()).is_err());
    }
}
