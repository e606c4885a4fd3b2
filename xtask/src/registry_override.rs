//! `--registry-override NAME=URL`, shared by `pin` and `validate --online` (one validation,
//! docs/image.md): NAME a registry host name, URL an `http(s)://host[:port][/path]` base with
//! a real port and no credentials, query or fragment.

use std::collections::BTreeMap;

/// Why the authority (`host[:port]`) of an override URL is unusable, if it is: an empty host,
/// an empty or non-numeric port (`http://127.0.0.1:/` would silently mean port 80), port 0 or
/// one above 65535, or user info.
fn authority_problem(url: &str) -> Option<&'static str> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Some("credentials in the URL are not accepted (use the Docker config)");
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        match v6.split_once(']') {
            Some((h, tail)) => (h, tail.strip_prefix(':')),
            None => return Some("an IPv6 host needs its closing `]`"),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Some("the host is empty");
    }
    match port {
        Some("") => Some("the port after `:` is empty"),
        Some(p)
            if !p.bytes().all(|b| b.is_ascii_digit()) || !p.parse::<u16>().is_ok_and(|n| n > 0) =>
        {
            Some("the port must be a number from 1 to 65535")
        }
        _ => None,
    }
}

pub fn parse_overrides(list: &[String]) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for raw in list {
        // The value is echoed in errors: never raw (NUL, ESC, newlines).
        let s = infx_report::escape_control(raw);
        let (name, url) = raw
            .split_once('=')
            .ok_or_else(|| format!("--registry-override `{s}`: expected NAME=URL"))?;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-_:[]".contains(c))
        {
            return Err(format!(
                "--registry-override `{s}`: NAME must be a registry host name (e.g. docker.io, ghcr.io)"
            ));
        }
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!(
                "--registry-override `{s}`: the URL must start with http:// or https://"
            ));
        }
        if url.chars().any(infx_report::is_unsafe_char) {
            return Err(format!(
                "--registry-override `{s}`: the URL contains control characters"
            ));
        }
        // The client appends `/v2/<name>/…` to the base URL: a query or fragment would end
        // up in the middle of every request path.
        if url.contains(['?', '#']) {
            return Err(format!(
                "--registry-override `{s}`: a query (`?`) or fragment (`#`) is not accepted in the base URL"
            ));
        }
        if let Some(why) = authority_problem(url) {
            return Err(format!("--registry-override `{s}`: {why}"));
        }
        let name = if name == "index.docker.io" {
            "docker.io"
        } else {
            name
        };
        out.insert(name.to_string(), url.trim_end_matches('/').to_string());
    }
    Ok(out)
}
