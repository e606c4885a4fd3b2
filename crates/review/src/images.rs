//! Check 6: upstream vLLM/SGLang images (6a), public references, and engine-first ordering (6b).

use crate::codes;
use crate::masters::Entry;
use infx_report::Diagnostic;
use std::collections::BTreeSet;

pub(crate) const CODE_UPSTREAM: infx_report::Code = codes::UPSTREAM_IMAGE;
pub(crate) const CODE_PUBLIC: infx_report::Code = codes::IMAGE_PUBLIC;
pub(crate) const CODE_ORDER: infx_report::Code = codes::ENGINE_FIRST;

/// SKUs on which the upstream-image rule applies (new hardware may document an exception).
pub(crate) const ESTABLISHED_SKUS: &[&str] = &[
    "h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x",
];
pub(crate) const PUBLIC_REGISTRIES: &[&str] = &[
    "docker.io",
    "registry-1.docker.io",
    "index.docker.io",
    "nvcr.io",
    "ghcr.io",
    "quay.io",
];
/// Open-source engine frameworks (never subject to ordering).
pub(crate) const OPEN_SOURCE_FRAMEWORKS: &[&str] = &[
    "vllm",
    "dynamo-vllm",
    "sglang",
    "sglang-disagg",
    "dynamo-sglang",
];

/// An image reference split the way the rules need it (`#` read as `/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ImageRef {
    /// Registry host, `None` for Docker Hub short names.
    pub registry: Option<String>,
    /// Repository path without the registry (`lmsysorg/sglang`).
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl ImageRef {
    pub(crate) fn parse(s: &str) -> ImageRef {
        let s = s.trim().replacen('#', "/", 1);
        let (name, digest) = match s.split_once('@') {
            Some((n, d)) => (n.to_string(), Some(d.to_string())),
            None => (s.clone(), None),
        };
        let (name, tag) = match name.rfind(':') {
            Some(i) if !name[i..].contains('/') => {
                (name[..i].to_string(), Some(name[i + 1..].to_string()))
            }
            _ => (name, None),
        };
        let (registry, repository) = match name.split_once('/') {
            Some((first, rest))
                if first.contains('.') || first.contains(':') || first == "localhost" =>
            {
                (Some(first.to_ascii_lowercase()), rest.to_string())
            }
            _ => (None, name),
        };
        ImageRef {
            registry,
            repository,
            tag,
            digest,
        }
    }
    pub(crate) fn on_docker_hub(&self) -> bool {
        self.registry
            .as_deref()
            .is_none_or(|r| r.ends_with("docker.io"))
    }
    /// Docker Hub organisation (first path component).
    pub(crate) fn org(&self) -> &str {
        self.repository.split('/').next().unwrap_or("")
    }
}

/// The base GPU of a runner label (`cluster:gb300-nv` → `gb300`, `b200-multinode` → `b200`).
pub(crate) fn sku_of_runner(runner: &str) -> String {
    infx_config::gpu_of_runner(runner)
}

/// The upstream organisation a framework's images must come from, if it is bound by 6a.
pub(crate) fn upstream_org(framework: &str) -> Option<&'static str> {
    match framework {
        "vllm" | "dynamo-vllm" => Some("vllm"),
        "sglang" | "sglang-disagg" | "dynamo-sglang" => Some("lmsysorg"),
        _ => None,
    }
}

/// 6a + public-reference rules on every entry.
pub(crate) fn check(entries: &[Entry<'_>]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for e in entries {
        let Some(img_node) = e.image() else { continue };
        let Some(img) = img_node.as_str() else {
            continue;
        };
        let path = &e.doc.path;
        let r = ImageRef::parse(img);
        let t = img.trim();
        if t.starts_with('/') || t.starts_with("./") || t.starts_with('~') || t.ends_with(".sqsh") {
            out.push(
                Diagnostic::error(
                    CODE_PUBLIC,
                    format!(
                        "`{}`: image `{t}` is a local file, not a pullable image",
                        e.key
                    ),
                )
                .at(path, img_node.span)
                .with_help(
                    "use a public registry reference (Docker Hub, nvcr.io, ghcr.io, quay.io)",
                ),
            );
            continue;
        }
        if let Some(reg) = &r.registry
            && !PUBLIC_REGISTRIES.contains(&reg.as_str())
        {
            out.push(
                Diagnostic::error(
                    CODE_PUBLIC,
                    format!(
                        "`{}`: registry `{reg}` is not a public registry the review accepts",
                        e.key
                    ),
                )
                .at(path, img_node.span)
                .with_help("publish the image on Docker Hub, nvcr.io, ghcr.io or quay.io"),
            );
        }
        // The digest's form is the image check's (`image/malformed`, docs/image.md): one
        // finding per fault, so review does not report it again.
        let (Some(fw), Some(runner)) = (e.framework(), e.runner()) else {
            continue;
        };
        let Some(org) = upstream_org(fw) else {
            continue;
        };
        let sku = sku_of_runner(runner);
        if !ESTABLISHED_SKUS.contains(&sku.as_str()) {
            continue; // new hardware: an exception may be documented in the sign-off
        }
        if !(r.on_docker_hub() && r.org() == org) {
            out.push(
                Diagnostic::error(
                    CODE_UPSTREAM,
                    format!("`{}` ({fw} on {sku}) uses `{t}`, not an upstream `{org}/…` image", e.key),
                )
                .at(path, img_node.span)
                .with_help(format!("use an image from Docker Hub org `{org}` (any tag; a digest is fine)"))
                .with_note("exceptions (new hardware, architecture upstream cannot run yet) must be documented in the sign-off"),
            );
        }
    }
    out
}

/// 6b: an added vendor-framework entry needs an open-source entry for the same model prefix and
/// SKU. `base_keys` are the entry keys at the base revision (only added entries are checked).
pub(crate) fn check_engine_first(
    head: &[Entry<'_>],
    base_keys: &BTreeSet<String>,
) -> Vec<Diagnostic> {
    let open: BTreeSet<(String, String)> = head
        .iter()
        .filter(|e| {
            e.framework()
                .is_some_and(|f| OPEN_SOURCE_FRAMEWORKS.contains(&f))
        })
        .filter_map(|e| Some((e.model_prefix()?.to_string(), sku_of_runner(e.runner()?))))
        .collect();
    let mut out = Vec::new();
    for e in head.iter().filter(|e| !base_keys.contains(e.key)) {
        let (Some(fw), Some(prefix), Some(runner)) = (e.framework(), e.model_prefix(), e.runner())
        else {
            continue;
        };
        if OPEN_SOURCE_FRAMEWORKS.contains(&fw) {
            continue;
        }
        let sku = sku_of_runner(runner);
        if !open.contains(&(prefix.to_string(), sku.clone())) {
            out.push(
                Diagnostic::error(
                    CODE_ORDER,
                    format!("new vendor entry `{}` ({fw}) has no vLLM/SGLang entry for `{prefix}` on {sku}", e.key),
                )
                .at(&e.doc.path, e.key_node.span)
                .with_help("add the open-source engine entry first, or document the exception in the sign-off"),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::masters::entries;
    use infx_yaml::Document;

    fn doc(t: &str) -> Document {
        crate::test_support::doc("configs/nvidia-master.yaml", t)
    }

    #[test]
    fn parse_refs() {
        let r = ImageRef::parse("nvcr.io#nvidia/tensorrt-llm/release:1.3.0");
        assert_eq!(r.registry.as_deref(), Some("nvcr.io"));
        assert_eq!(r.repository, "nvidia/tensorrt-llm/release");
        let r = ImageRef::parse("lmsysorg/sglang:v0.5.14-cu130@sha256:5027e9");
        assert_eq!(
            (r.org(), r.tag.as_deref(), r.digest.as_deref()),
            ("lmsysorg", Some("v0.5.14-cu130"), Some("sha256:5027e9"))
        );
        assert_eq!(sku_of_runner("cluster:gb300-nv"), "gb300");
        assert_eq!(sku_of_runner("b200-multinode"), "b200");
    }

    #[test]
    fn spec_examples() {
        let d = doc(concat!(
            "dsv4-fp4-b200-vllm:\n  image: vllm/vllm-openai:v0.25.0\n  framework: vllm\n  runner: b200\n  model-prefix: dsv4\n",
            "qwen3.5-fp8-gb300-dynamo-sglang-mtp:\n  image: lmsysorg/sglang:v0.5.14-cu130@sha256:5027e9f0aa5027e9f0aa5027e9f0aa5027e9f0aa5027e9f0aa5027e9f0aa1234\n  framework: dynamo-sglang\n  runner: cluster:gb300-nv\n  model-prefix: qwen3.5\n",
            "dsr1-fp8-mi355x-sglang-disagg:\n  image: rocm/sgl-dev:sglang-0.5.9-rocm720-mi35x-mori-0227-2\n  framework: sglang-disagg\n  runner: mi355x-disagg\n  model-prefix: dsr1\n",
            "x-fp4-vr200-sglang:\n  image: rocm/sgl-dev:x\n  framework: sglang\n  runner: vr200\n",
            "local:\n  image: /home/me/x.sqsh\n  framework: trt\n  runner: b200\n",
            "typo:\n  image: lmsysorg/sglang:v1@sha256:abc\n  framework: sglang\n  runner: b200\n",
        ));
        let docs = vec![d];
        let es = entries(&docs);
        let diags = check(&es);
        let codes: Vec<(infx_report::Code, &str)> = diags
            .iter()
            .map(|d| (d.code, d.message.split('`').nth(1).unwrap_or("")))
            .collect();
        assert_eq!(
            codes,
            [
                (CODE_UPSTREAM, "dsr1-fp8-mi355x-sglang-disagg"),
                (CODE_PUBLIC, "local")
            ]
        );
    }

    #[test]
    fn engine_first_uses_base_gpu() {
        let d = doc(concat!(
            "dsr1-fp8-gb300-dynamo-sglang:\n  framework: dynamo-sglang\n  runner: gb300\n  model-prefix: dsr1\n",
            "dsr1-fp8-gb300-dynamo-trt:\n  framework: dynamo-trt\n  runner: gb300-nv\n  model-prefix: dsr1\n",
            "glm5.1-fp8-b200-tilert:\n  framework: tilert\n  runner: b200-multinode\n  model-prefix: glm5.1\n",
        ));
        let docs = vec![d];
        let es = entries(&docs);
        let base: BTreeSet<String> = ["dsr1-fp8-gb300-dynamo-sglang".to_string()].into();
        let diags = check_engine_first(&es, &base);
        assert_eq!(diags.len(), 1);
        assert!(diags[0].message.contains("glm5.1-fp8-b200-tilert"));
    }
}
