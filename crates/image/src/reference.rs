//! OCI image references: grammar, normalisation (distribution/reference semantics), digests.

use std::fmt;

/// A content digest `<algorithm>:<encoded>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest {
    pub algorithm: String,
    pub encoded: String,
}

impl Digest {
    /// Parses `alg:encoded` by the OCI descriptor grammar. `sha256`/`sha512` must be lowercase hex
    /// of the right length; other algorithms only need to fit the grammar.
    pub fn parse(s: &str) -> Result<Digest, RefError> {
        let bad = |why: &str| RefError::InvalidDigest {
            digest: s.to_string(),
            why: why.to_string(),
        };
        let (alg, enc) = s
            .split_once(':')
            .ok_or_else(|| bad("expected `<algorithm>:<hex>`"))?;
        if !valid_algorithm(alg) {
            return Err(bad("the algorithm must match [a-z0-9]+([+._-][a-z0-9]+)*"));
        }
        if enc.is_empty()
            || !enc
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"=_-".contains(&b))
        {
            return Err(bad("the encoded part must match [a-zA-Z0-9=_-]+"));
        }
        let want = match alg {
            "sha256" => Some(64),
            "sha512" => Some(128),
            _ => None,
        };
        if let Some(n) = want
            && let Some(why) = hex_digest_fault(alg, enc, n)
        {
            return Err(bad(&why));
        }
        Ok(Digest {
            algorithm: alg.to_string(),
            encoded: enc.to_string(),
        })
    }

    /// The sha256 digest of `bytes`.
    pub fn sha256_of(bytes: &[u8]) -> Digest {
        use sha2::Digest as _;
        Digest {
            algorithm: "sha256".into(),
            encoded: hex(&sha2::Sha256::digest(bytes)),
        }
    }

    /// Hashes `bytes` with this digest's algorithm. `None` for algorithms we cannot compute, so
    /// an unknown algorithm is never reported as verified.
    pub fn verify(&self, bytes: &[u8]) -> Option<bool> {
        use sha2::Digest as _;
        let got = match self.algorithm.as_str() {
            "sha256" => hex(&sha2::Sha256::digest(bytes)),
            "sha512" => hex(&sha2::Sha512::digest(bytes)),
            _ => return None,
        };
        Some(got == self.encoded)
    }

    /// Well-formed `sha256:<64 lowercase hex>` (the form a pin must use).
    pub fn is_sha256(&self) -> bool {
        self.algorithm == "sha256"
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.algorithm, self.encoded)
    }
}

/// What is wrong with the hex part `enc` of an `alg` digest that needs `n` lowercase hex
/// digits, in the user's terms (a count, or the first character that is not one); `None` when
/// it is right.
fn hex_digest_fault(alg: &str, enc: &str, n: usize) -> Option<String> {
    let len = enc.chars().count();
    let count = if len == n {
        String::new()
    } else {
        format!("; it has {len} characters where {alg} needs {n}")
    };
    if let Some((i, c)) = enc
        .chars()
        .enumerate()
        .find(|(_, c)| !matches!(c, '0'..='9' | 'a'..='f'))
    {
        let what = if c.is_ascii_hexdigit() {
            format!(
                "character {} `{c}` is upper case; {alg} digests are lowercase hex",
                i + 1
            )
        } else {
            format!("character {} `{c}` is not a hex digit (0-9, a-f)", i + 1)
        };
        return Some(format!("{what}{count}"));
    }
    (len != n).then(|| format!("the digest has {len} hex digits; {alg} needs {n}"))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(H[(b >> 4) as usize] as char);
        s.push(H[(b & 15) as usize] as char);
    }
    s
}

fn valid_algorithm(alg: &str) -> bool {
    // [a-z0-9]+([+._-][a-z0-9]+)*
    !alg.is_empty()
        && alg.split(['+', '.', '_', '-']).all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// Why a reference does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefError {
    Empty,
    InvalidName { name: String, why: String },
    InvalidTag { tag: String },
    InvalidDigest { digest: String, why: String },
    TooLong { len: usize },
}

impl fmt::Display for RefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefError::Empty => f.write_str("the image reference is empty"),
            RefError::InvalidName { name, why } => {
                write!(f, "invalid repository name `{name}`: {why}")
            }
            RefError::InvalidTag { tag } => write!(
                f,
                "invalid tag `{tag}`: a tag is 1-128 characters of [A-Za-z0-9_.-] and does not start with `.` or `-`"
            ),
            RefError::InvalidDigest { digest, why } => {
                write!(f, "invalid digest `{digest}`: {why}")
            }
            RefError::TooLong { len } => {
                write!(
                    f,
                    "the repository name is {len} characters long; registries accept at most 255"
                )
            }
        }
    }
}

impl std::error::Error for RefError {}

/// A parsed, normalised reference. `registry` is the registry *name* (`docker.io`, `nvcr.io`,
/// `127.0.0.1:5000`), not necessarily the host to connect to (see [`Reference::api_host`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reference {
    pub registry: String,
    pub repository: String,
    /// The tag as written; `None` when the reference had none.
    pub tag: Option<String>,
    pub digest: Option<Digest>,
}

pub(crate) const DOCKER_HUB: &str = "docker.io";

impl Reference {
    /// Parses `[registry/]path[:tag][@digest]`, also the enroot form `registry#path` (the first
    /// `#` reads as `/`, as InferenceX's launcher does).
    pub fn parse(input: &str) -> Result<Reference, RefError> {
        let s = input.trim();
        if s.is_empty() {
            return Err(RefError::Empty);
        }
        let s = s.replacen('#', "/", 1);
        let (rest, digest) = match s.split_once('@') {
            Some((r, d)) => (r, Some(Digest::parse(d)?)),
            None => (s.as_str(), None),
        };
        // The tag is after the last ':' that follows the last '/' (a ':' before it is a port).
        let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match rest[last_slash..].rfind(':') {
            Some(i) => {
                let at = last_slash + i;
                (&rest[..at], Some(rest[at + 1..].to_string()))
            }
            None => (rest, None),
        };
        if let Some(t) = &tag
            && !valid_tag(t)
        {
            return Err(RefError::InvalidTag { tag: t.clone() });
        }
        let bad = |why: &str| RefError::InvalidName {
            name: name.to_string(),
            why: why.to_string(),
        };
        if name.is_empty() {
            return Err(bad("the name is empty"));
        }
        let (registry, path) = match name.split_once('/') {
            Some((first, path)) if is_host(first) => {
                if !first.contains(['.', ':']) && first != "localhost" {
                    return Err(bad(&format!(
                        "`{first}` has uppercase letters, so it would be read as a registry host; repository names must be lowercase"
                    )));
                }
                if !valid_host(first) {
                    return Err(bad(&format!("`{first}` is not a valid registry host")));
                }
                (first.to_string(), path.to_string())
            }
            _ => (DOCKER_HUB.to_string(), name.to_string()),
        };
        let registry = if registry == "index.docker.io" {
            DOCKER_HUB.to_string()
        } else {
            registry
        };
        for comp in path.split('/') {
            if !valid_component(comp) {
                let why = if comp.bytes().any(|b| b.is_ascii_uppercase()) {
                    format!("`{comp}` has uppercase letters; repository names must be lowercase")
                } else if comp.is_empty() {
                    "empty path component".to_string()
                } else {
                    format!("`{comp}` must match [a-z0-9]+((.|_|__|-+)[a-z0-9]+)*")
                };
                return Err(bad(&why));
            }
        }
        let path = if registry == DOCKER_HUB && !path.contains('/') {
            format!("library/{path}")
        } else {
            path
        };
        let len = registry.len() + 1 + path.len();
        if len > 255 {
            return Err(RefError::TooLong { len });
        }
        Ok(Reference {
            registry,
            repository: path,
            tag,
            digest,
        })
    }

    /// The tag to resolve: the written tag, or `latest` when neither tag nor digest was written.
    pub fn effective_tag(&self) -> Option<&str> {
        match (&self.tag, &self.digest) {
            (Some(t), _) => Some(t),
            (None, None) => Some("latest"),
            (None, Some(_)) => None,
        }
    }

    /// `registry/repository` (no tag, no digest).
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// `registry/repository:tag` with the implicit `latest` made explicit; the digest dropped.
    pub fn tagged(&self) -> String {
        match self.effective_tag() {
            Some(t) => format!("{}:{t}", self.name()),
            None => self.name(),
        }
    }

    /// The host that serves the v2 API for this registry name.
    pub fn api_host(&self) -> &str {
        if self.registry == DOCKER_HUB {
            "registry-1.docker.io"
        } else {
            &self.registry
        }
    }
}

impl fmt::Display for Reference {
    /// The canonical form: `docker.io/library/ubuntu:latest`, `…:tag@sha256:…`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.tagged())?;
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

fn is_host(first: &str) -> bool {
    first == "localhost"
        || first.contains('.')
        || first.contains(':')
        || first.bytes().any(|b| b.is_ascii_uppercase())
}

fn valid_host(h: &str) -> bool {
    let (host, port) = match h.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (h, None),
    };
    if let Some(p) = port
        && (p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return false;
    }
    !host.is_empty()
        && host.split('.').all(|l| {
            !l.is_empty()
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

fn valid_tag(t: &str) -> bool {
    let b = t.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || b"_.-".contains(&c))
}

/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`
fn valid_component(c: &str) -> bool {
    let b = c.as_bytes();
    let alnum = |x: u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if alnum(b[i]) {
            i += 1;
            continue;
        }
        // A separator run: ".", "_", "__" or one or more "-".
        let start = i;
        while i < b.len() && !alnum(b[i]) {
            i += 1;
        }
        let sep = &c[start..i];
        let ok = sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|x| x == b'-');
        if !ok {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:7cfd4f8e2f1f1b0b8e8f0c6c8d0a4b2f3e1d0c9b8a7f6e5d4c3b2a1908f7e6d5";

    fn canon(s: &str) -> String {
        Reference::parse(s)
            .map(|r| r.to_string())
            .unwrap_or_else(|e| format!("ERR {e}"))
    }

    #[test]
    fn docker_hub_normalisation() {
        for s in [
            "ubuntu",
            "library/ubuntu",
            "docker.io/ubuntu",
            "index.docker.io/library/ubuntu",
        ] {
            assert_eq!(canon(s), "docker.io/library/ubuntu:latest", "{s}");
        }
        assert_eq!(
            canon(&format!("python:3.12@{D}")),
            format!("docker.io/library/python:3.12@{D}")
        );
        assert_eq!(
            canon("lmsysorg/sglang:v0.5.14-cu130"),
            "docker.io/lmsysorg/sglang:v0.5.14-cu130"
        );
    }

    #[test]
    fn digest_faults_are_said_in_the_users_terms() {
        let why = |enc: &str| match Digest::parse(&format!("sha256:{enc}")) {
            Err(RefError::InvalidDigest { why, .. }) => why,
            other => panic!("{other:?}"),
        };
        let h = "0123456789abcdef".repeat(4);
        assert_eq!(
            why(&h[1..]),
            "the digest has 63 hex digits; sha256 needs 64"
        );
        assert_eq!(
            why(&format!("{h}0")),
            "the digest has 65 hex digits; sha256 needs 64"
        );
        assert_eq!(
            why(&format!("{}A{}", &h[..9], &h[10..])),
            "character 10 `A` is upper case; sha256 digests are lowercase hex"
        );
        assert_eq!(
            why(&format!("{}g", &h[..62])),
            "character 63 `g` is not a hex digit (0-9, a-f); it has 63 characters where sha256 needs 64"
        );
        assert!(Digest::parse(&format!("sha256:{h}")).is_ok());
    }

    #[test]
    fn hosts_are_kept() {
        assert_eq!(canon("localhost/foo"), "localhost/foo:latest");
        assert_eq!(canon("localhost:5000/foo"), "localhost:5000/foo:latest");
        assert_eq!(
            canon("127.0.0.1:5000/ns/img:v1"),
            "127.0.0.1:5000/ns/img:v1"
        );
        assert_eq!(canon("ghcr.io/owner/img"), "ghcr.io/owner/img:latest");
    }

    #[test]
    fn enroot_hash_separator() {
        let r = Reference::parse("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc14").unwrap();
        assert_eq!(r.registry, "nvcr.io");
        assert_eq!(r.repository, "nvidia/tensorrt-llm/release");
        assert_eq!(r.tag.as_deref(), Some("1.3.0rc14"));
    }

    #[test]
    fn malformed_references_are_errors() {
        assert!(canon("UBUNTU").starts_with("ERR"));
        assert!(canon("ubuntu:").starts_with("ERR invalid tag"));
        assert!(canon("Uppercase/foo").starts_with("ERR invalid repository name"));
        assert!(canon("").starts_with("ERR"));
        assert!(canon("a/b:-x").starts_with("ERR invalid tag"));
        assert!(canon("a/b@sha256:abc").starts_with("ERR invalid digest"));
        assert!(canon(&format!("a/b@{}", D.to_uppercase())).starts_with("ERR invalid digest"));
        assert!(canon("a//b").starts_with("ERR"));
        assert!(canon("a/b_-c").starts_with("ERR"));
        let long = format!("x/{}", "a".repeat(300));
        assert!(canon(&long).starts_with("ERR the repository name is"));
    }

    #[test]
    fn separators() {
        for ok in ["a.b", "a_b", "a__b", "a---b", "a1", "9"] {
            assert!(valid_component(ok), "{ok}");
        }
        for bad in ["a..b", "a___b", "_a", "a-", "a.-b", "A"] {
            assert!(!valid_component(bad), "{bad}");
        }
    }

    #[test]
    fn digest_only_and_verification() {
        let r = Reference::parse(&format!("vllm/vllm-openai@{D}")).unwrap();
        assert_eq!(r.tag, None);
        assert_eq!(r.effective_tag(), None);
        let d = Digest::sha256_of(b"abc");
        assert_eq!(
            d.encoded,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(d.verify(b"abc"), Some(true));
        assert_eq!(d.verify(b"abd"), Some(false));
        let unknown = Digest::parse("blake3:abcd").unwrap();
        assert_eq!(unknown.verify(b"abc"), None);
    }

    proptest::proptest! {
        #[test]
        fn canonical_form_is_a_fixed_point(
            ns in "[a-z0-9]{1,8}", img in "[a-z0-9]{1,8}(-[a-z0-9]{1,4})?", tag in "[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}"
        ) {
            let r = Reference::parse(&format!("{ns}/{img}:{tag}")).unwrap();
            let again = Reference::parse(&r.to_string()).unwrap();
            proptest::prop_assert_eq!(r, again);
        }

        #[test]
        fn parse_never_panics(s in "\\PC{0,80}") {
            let _ = Reference::parse(&s);
        }
    }
}
