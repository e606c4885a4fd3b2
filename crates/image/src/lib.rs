//! infx-image: OCI image references, a small registry client, tag → multi-arch index digest
//! resolution, verification of pins, and the pin rewrite itself (docs/image.md).
//!
//! Offline checks ([`check_offline`]) are pure functions of the loaded files; only
//! [`Client`] touches the network, and a hermetic client refuses to.

//!
//! The feature `registry` (default) adds everything that talks to a registry or models its
//! manifests; without it the crate is the offline part `validate` needs (README, "What builds
//! when").

mod check;
#[cfg(feature = "registry")]
mod client;
pub mod codes;
#[cfg(feature = "registry")]
pub mod manifest;
#[cfg(feature = "registry")]
pub mod pin;
mod policy;
mod reference;
mod sites;
#[cfg(test)]
mod test_support;
#[cfg(feature = "registry")]
mod verify;

#[cfg(feature = "registry")]
pub use check::check_online;
pub use check::{check_document, check_offline, check_offline_with};
#[cfg(feature = "registry")]
pub use client::{
    Challenge, Client, ClientConfig, Credential, RegistryError, parse_challenge,
    parse_docker_config,
};
#[cfg(feature = "registry")]
pub use manifest::Platform;
pub use policy::{POLICY_FILE, PinPolicy, dropped_pins};
pub use reference::{Digest, RefError, Reference};
pub use sites::{ImageSite, SiteKind, master_sites, recipe_sites, sites_in};
#[cfg(feature = "registry")]
pub use verify::{Finding, ResolveError, Resolved, VerifyOptions, resolve, verify};
