//! infx-image: OCI image references, a small registry client, tag → multi-arch index digest
//! resolution, verification of pins, and the pin rewrite itself (images.md).
//!
//! Offline checks ([`check_offline`]) are pure functions of the loaded files; only
//! [`Client`] touches the network, and a hermetic client refuses to.

pub mod check;
pub mod client;
pub mod manifest;
pub mod pin;
pub mod reference;
pub mod sites;
pub mod verify;

pub use check::{check_document, check_offline, check_online};
pub use client::{Client, ClientConfig, Credential, RegistryError, parse_docker_config};
pub use manifest::Platform;
pub use reference::{Digest, RefError, Reference};
pub use sites::{ImageSite, SiteKind, master_sites, recipe_sites, sites_in};
pub use verify::{Finding, ResolveError, Resolved, VerifyOptions, resolve, verify};
