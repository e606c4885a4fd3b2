//! A small blocking registry client (distribution API v2) on `ureq`: manifest HEAD/GET with the
//! four-type `Accept`, the bearer-token challenge flow, verification of the bytes received, size
//! limits, timeouts, retries with backoff on 429/5xx, and redirects that never carry credentials
//! to another origin.

use crate::manifest::{self, ACCEPT};
use crate::reference::{Digest, Reference};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Credentials for one registry. `Debug` never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    /// base64(`user:password`), the value of an HTTP Basic `Authorization` header.
    basic: String,
}

impl Credential {
    pub fn from_user_password(user: &str, password: &str) -> Credential {
        Credential {
            basic: base64(format!("{user}:{password}").as_bytes()),
        }
    }
    /// The `auth` field of `~/.docker/config.json` (already base64 of `user:password`).
    pub fn from_docker_auth(auth: &str) -> Option<Credential> {
        let ok = !auth.is_empty()
            && auth
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b));
        ok.then(|| Credential {
            basic: auth.to_string(),
        })
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Credential(<redacted>)")
    }
}

/// Reads the `auths` of a Docker `config.json` into registry name → credential. Keys like
/// `https://index.docker.io/v1/` map to `docker.io`. Credential helpers (`credsStore`,
/// `credHelpers`) are not run.
pub fn parse_docker_config(text: &str) -> Result<BTreeMap<String, Credential>, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let mut out = BTreeMap::new();
    if let Some(auths) = v.get("auths").and_then(|a| a.as_object()) {
        for (key, entry) in auths {
            let host = key
                .trim_start_matches("https://")
                .trim_start_matches("http://");
            let host = host.split('/').next().unwrap_or("");
            let host = match host {
                "index.docker.io" | "registry-1.docker.io" | "docker.io" => "docker.io",
                h => h,
            };
            if let Some(c) = entry
                .get("auth")
                .and_then(|a| a.as_str())
                .and_then(Credential::from_docker_auth)
            {
                out.insert(host.to_string(), c);
            }
        }
    }
    Ok(out)
}

/// Client settings. `Default` is what `cargo xtask pin` uses.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Whole-request deadline (connect + headers + body).
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Largest manifest accepted (distribution itself refuses manifests over 4 MiB).
    pub max_manifest_bytes: u64,
    /// Retries after a 429, a 5xx or a transport error.
    pub retries: u32,
    /// Overall budget of one request with its retries: no retry starts after it has passed, so
    /// a slow-loris registry costs at most `retry_deadline + timeout` per request
    /// (docs/image.md), not `timeout × (retries + 1)`.
    pub retry_deadline: Duration,
    pub backoff: Duration,
    /// Cap for one wait (also for `Retry-After`); a longer `Retry-After` fails the request.
    pub max_backoff: Duration,
    /// Registry name (`docker.io`, `nvcr.io`) → base URL (`http://127.0.0.1:5000`). Plain HTTP
    /// is only ever used through an explicit override.
    pub overrides: BTreeMap<String, String>,
    pub credentials: BTreeMap<String, Credential>,
    /// Refuse every network request.
    pub hermetic: bool,
    pub user_agent: String,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            max_manifest_bytes: 4 << 20,
            retries: 4,
            retry_deadline: Duration::from_secs(45),
            backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(30),
            overrides: BTreeMap::new(),
            credentials: BTreeMap::new(),
            hermetic: false,
            user_agent: concat!("infx-image/", env!("CARGO_PKG_VERSION")).to_string(),
        }
    }
}

/// What can go wrong talking to a registry. Messages never contain credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegistryError {
    /// `--hermetic` (or a hermetic build) forbids the network.
    Hermetic {
        url: String,
    },
    /// 401 after a fresh token: not found or not authorised (Docker Hub answers 401 for both).
    Unauthorized {
        url: String,
        detail: String,
    },
    /// sha256 of the bytes received differs from the digest asked for or announced.
    DigestMismatch {
        url: String,
        expected: Digest,
        actual: Digest,
    },
    UnsupportedDigest {
        digest: Digest,
    },
    TooLarge {
        url: String,
        limit: u64,
    },
    RateLimited {
        url: String,
        detail: String,
    },
    Timeout {
        url: String,
    },
    Http {
        url: String,
        status: u16,
        detail: String,
    },
    Transport {
        url: String,
        detail: String,
    },
    Protocol {
        url: String,
        detail: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use RegistryError::*;
        match self {
            Hermetic { url } => write!(
                f,
                "network access is disabled (hermetic run) but {url} is needed"
            ),
            Unauthorized { url, detail } => write!(
                f,
                "{url}: 401 unauthorized after a fresh token ({detail}); the repository does not exist or needs credentials"
            ),
            DigestMismatch {
                url,
                expected,
                actual,
            } => write!(
                f,
                "{url}: the bytes received hash to {actual}, not {expected} (corrupt or tampered response)"
            ),
            UnsupportedDigest { digest } => write!(
                f,
                "digest algorithm `{}` cannot be verified (only sha256 and sha512)",
                digest.algorithm
            ),
            TooLarge { url, limit } => write!(
                f,
                "{url}: the response is larger than the {limit}-byte limit"
            ),
            RateLimited { url, detail } => write!(f, "{url}: rate limited (429) {detail}"),
            Timeout { url } => write!(f, "{url}: timed out"),
            Http {
                url,
                status,
                detail,
            } => write!(f, "{url}: HTTP {status} {detail}"),
            Transport { url, detail } => write!(f, "{url}: {detail}"),
            Protocol { url, detail } => write!(f, "{url}: {detail}"),
        }
    }
}

impl std::error::Error for RegistryError {}

impl RegistryError {
    fn retryable(&self) -> bool {
        matches!(
            self,
            RegistryError::Timeout { .. } | RegistryError::Transport { .. }
        )
    }
}

/// The answer to a manifest HEAD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// `Docker-Content-Digest` (unverifiable on a HEAD; fine to re-check a pin).
    pub digest: Option<Digest>,
    pub media_type: String,
    pub size: Option<u64>,
}

/// A manifest fetched with GET and verified: `digest` is the sha256 of `bytes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetched {
    pub digest: Digest,
    pub media_type: String,
    pub bytes: Vec<u8>,
}

/// Request counters (for tests and the bench).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub requests: usize,
    pub token_requests: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Method {
    Head,
    Get,
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    url: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A registry client; share one per run (it keeps connections and tokens). `Sync`: resolve in
/// parallel from several threads.
pub struct Client {
    agent: ureq::Agent,
    cfg: ClientConfig,
    /// (base URL, repository) → `Authorization` value and its expiry.
    auth: Mutex<HashMap<(String, String), (String, Instant)>>,
    requests: AtomicUsize,
    token_requests: AtomicUsize,
    fetch_lock: Mutex<()>,
}

impl Client {
    pub fn new(cfg: ClientConfig) -> Client {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // Redirects are followed by hand so credentials stay on their origin.
            .max_redirects(0)
            .timeout_global(Some(cfg.timeout))
            .timeout_connect(Some(cfg.connect_timeout))
            .user_agent(cfg.user_agent.as_str())
            .max_idle_connections_per_host(16)
            .build()
            .into();
        Client {
            agent,
            cfg,
            auth: Mutex::new(HashMap::new()),
            requests: AtomicUsize::new(0),
            token_requests: AtomicUsize::new(0),
            fetch_lock: Mutex::new(()),
        }
    }

    pub fn config(&self) -> &ClientConfig {
        &self.cfg
    }

    pub fn stats(&self) -> Stats {
        Stats {
            requests: self.requests.load(Ordering::Relaxed),
            token_requests: self.token_requests.load(Ordering::Relaxed),
        }
    }

    /// The base URL serving the v2 API of the reference's registry.
    pub fn base_url(&self, r: &Reference) -> String {
        match self.cfg.overrides.get(&r.registry) {
            Some(u) => u.trim_end_matches('/').to_string(),
            None => format!("https://{}", r.api_host()),
        }
    }

    /// HEAD `manifests/<tag-or-digest>`. `Ok(None)` on 404.
    pub fn head_manifest(
        &self,
        r: &Reference,
        reference: &str,
    ) -> Result<Option<Head>, RegistryError> {
        let reply = self.request(r, Method::Head, &format!("/manifests/{reference}"))?;
        if reply.status == 404 {
            return Ok(None);
        }
        expect_ok(&reply)?;
        let digest = match reply.header("docker-content-digest") {
            Some(d) => Some(
                Digest::parse(d.trim())
                    .map_err(|e| protocol(&reply, &format!("bad Docker-Content-Digest: {e}")))?,
            ),
            None => None,
        };
        let media_type = reply.header("content-type").unwrap_or("").to_string();
        let size = reply
            .header("content-length")
            .and_then(|s| s.trim().parse().ok());
        Ok(Some(Head {
            digest,
            media_type,
            size,
        }))
    }

    /// GET `manifests/<tag-or-digest>` and verify the bytes: their sha256 must equal
    /// `Docker-Content-Digest` when present and the digest asked for when `reference` is one.
    /// `Ok(None)` on 404.
    pub fn get_manifest(
        &self,
        r: &Reference,
        reference: &str,
    ) -> Result<Option<Fetched>, RegistryError> {
        let asked = if reference.contains(':') {
            Some(
                Digest::parse(reference).map_err(|e| RegistryError::Protocol {
                    url: reference.into(),
                    detail: e.to_string(),
                })?,
            )
        } else {
            None
        };
        if let Some(d) = &asked
            && d.verify(b"").is_none()
        {
            return Err(RegistryError::UnsupportedDigest { digest: d.clone() });
        }
        let reply = self.request(r, Method::Get, &format!("/manifests/{reference}"))?;
        if reply.status == 404 {
            return Ok(None);
        }
        expect_ok(&reply)?;
        let actual = Digest::sha256_of(&reply.body);
        let mismatch = |expected: &Digest| RegistryError::DigestMismatch {
            url: reply.url.clone(),
            expected: expected.clone(),
            actual: actual.clone(),
        };
        if let Some(h) = reply.header("docker-content-digest") {
            let h = Digest::parse(h.trim())
                .map_err(|e| protocol(&reply, &format!("bad Docker-Content-Digest: {e}")))?;
            match h.verify(&reply.body) {
                Some(true) => {}
                Some(false) => return Err(mismatch(&h)),
                None => return Err(RegistryError::UnsupportedDigest { digest: h }),
            }
        }
        let digest = match asked {
            Some(d) => {
                if d.verify(&reply.body) != Some(true) {
                    return Err(mismatch(&d));
                }
                d
            }
            None => actual.clone(),
        };
        let media_type = reply
            .header("content-type")
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        if let Some(body_mt) = manifest::body_media_type(&reply.body)
            && !media_type.is_empty()
            && body_mt != media_type
        {
            return Err(protocol(
                &reply,
                &format!(
                    "Content-Type `{media_type}` differs from the manifest's mediaType `{body_mt}`"
                ),
            ));
        }
        Ok(Some(Fetched {
            digest,
            media_type,
            bytes: reply.body,
        }))
    }

    fn request(&self, r: &Reference, method: Method, path: &str) -> Result<Reply, RegistryError> {
        let base = self.base_url(r);
        let url = format!("{base}/v2/{}{path}", r.repository);
        if self.cfg.hermetic {
            return Err(RegistryError::Hermetic { url });
        }
        let key = (base.clone(), r.repository.clone());
        let mut fresh_auth = false;
        let mut attempt = 0u32;
        let started = Instant::now();
        loop {
            let auth = self.cached_auth(&key);
            let reply = match self.exchange(method, &url, auth.as_deref()) {
                Ok(reply) => reply,
                Err(e)
                    if e.retryable()
                        && attempt < self.cfg.retries
                        && self.may_retry(started, attempt) =>
                {
                    std::thread::sleep(self.backoff(attempt, None));
                    attempt += 1;
                    continue;
                }
                Err(e) => return Err(e),
            };
            match reply.status {
                401 => {
                    let challenge = reply.header("www-authenticate").map(parse_challenge);
                    if fresh_auth {
                        let detail = challenge
                            .and_then(|c| c.params.get("error").cloned())
                            .unwrap_or_else(|| "no error detail".into());
                        return Err(RegistryError::Unauthorized { url, detail });
                    }
                    fresh_auth = true;
                    // One token fetch per repository even when threads hit the challenge
                    // together: the others wait and reuse it.
                    let _fetching = self.fetch_lock.lock();
                    let now_cached = self.cached_auth(&key);
                    if now_cached.is_some() && now_cached != auth {
                        continue;
                    }
                    let value = match challenge {
                        Some(c) if c.scheme.eq_ignore_ascii_case("bearer") => {
                            self.fetch_token(&c, r, &url)?
                        }
                        Some(c) if c.scheme.eq_ignore_ascii_case("basic") => match self
                            .cfg
                            .credentials
                            .get(&r.registry)
                        {
                            Some(cred) => {
                                (format!("Basic {}", cred.basic), Duration::from_secs(3600))
                            }
                            None => return Err(RegistryError::Unauthorized {
                                url,
                                detail:
                                    "the registry wants Basic credentials and none are configured"
                                        .into(),
                            }),
                        },
                        _ => {
                            return Err(RegistryError::Unauthorized {
                                url,
                                detail: "401 without a usable WWW-Authenticate challenge".into(),
                            });
                        }
                    };
                    if let Ok(mut m) = self.auth.lock() {
                        m.insert(key.clone(), (value.0, Instant::now() + value.1));
                    }
                }
                429 | 500 | 502 | 503 | 504 => {
                    let retry_after = reply
                        .header("retry-after")
                        .and_then(|s| s.trim().parse::<u64>().ok())
                        .map(Duration::from_secs);
                    let too_long = retry_after.is_some_and(|d| d > self.cfg.max_backoff);
                    if attempt >= self.cfg.retries || too_long || !self.may_retry(started, attempt)
                    {
                        let detail = rate_detail(&reply, retry_after);
                        return Err(if reply.status == 429 {
                            RegistryError::RateLimited { url, detail }
                        } else {
                            RegistryError::Http {
                                url,
                                status: reply.status,
                                detail,
                            }
                        });
                    }
                    std::thread::sleep(self.backoff(attempt, retry_after));
                    attempt += 1;
                }
                _ => return Ok(reply),
            }
        }
    }

    /// Whether another attempt (after its backoff) still starts within the retry deadline.
    fn may_retry(&self, started: Instant, attempt: u32) -> bool {
        started.elapsed() + self.backoff(attempt, None) < self.cfg.retry_deadline
    }

    fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let exp = self.cfg.backoff.saturating_mul(1u32 << attempt.min(16));
        retry_after.unwrap_or(exp).min(self.cfg.max_backoff)
    }

    fn cached_auth(&self, key: &(String, String)) -> Option<String> {
        let m = self.auth.lock().ok()?;
        let (v, until) = m.get(key)?;
        (Instant::now() < *until).then(|| v.clone())
    }

    /// The token request of the Docker token-authentication spec; Basic credentials for the
    /// registry are sent to the realm when configured.
    fn fetch_token(
        &self,
        c: &Challenge,
        r: &Reference,
        url: &str,
    ) -> Result<(String, Duration), RegistryError> {
        let realm = c
            .params
            .get("realm")
            .ok_or_else(|| RegistryError::Unauthorized {
                url: url.into(),
                detail: "Bearer challenge without realm".into(),
            })?;
        if !(realm.starts_with("https://") || realm.starts_with("http://")) {
            return Err(RegistryError::Protocol {
                url: url.into(),
                detail: format!("token realm `{realm}` is not an http(s) URL"),
            });
        }
        let scope = c
            .params
            .get("scope")
            .cloned()
            .unwrap_or_else(|| format!("repository:{}:pull", r.repository));
        let mut token_url = realm.clone();
        token_url.push(if realm.contains('?') { '&' } else { '?' });
        if let Some(svc) = c.params.get("service") {
            token_url.push_str(&format!("service={}&", urlencode(svc)));
        }
        token_url.push_str(&format!("scope={}", urlencode(&scope)));
        self.token_requests.fetch_add(1, Ordering::Relaxed);
        let basic = self
            .cfg
            .credentials
            .get(&r.registry)
            .map(|c| format!("Basic {}", c.basic));
        let mut attempt = 0;
        let reply = loop {
            match self.exchange(Method::Get, &token_url, basic.as_deref()) {
                Ok(rep)
                    if matches!(rep.status, 429 | 500 | 502 | 503 | 504)
                        && attempt < self.cfg.retries => {}
                Ok(rep) => break rep,
                Err(e) if e.retryable() && attempt < self.cfg.retries => {}
                Err(e) => return Err(e),
            }
            std::thread::sleep(self.backoff(attempt, None));
            attempt += 1;
        };
        if reply.status != 200 {
            return Err(RegistryError::Unauthorized {
                url: url.into(),
                detail: format!("the token service answered HTTP {}", reply.status),
            });
        }
        let v: serde_json::Value =
            serde_json::from_slice(&reply.body).map_err(|e| RegistryError::Protocol {
                url: realm.clone(),
                detail: format!("token response is not JSON: {e}"),
            })?;
        let token = v
            .get("token")
            .or_else(|| v.get("access_token"))
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| RegistryError::Protocol {
                url: realm.clone(),
                detail: "token response has no token".into(),
            })?;
        // The spec's minimum (and default) lifetime is 60 s; renew a little early.
        let secs = v
            .get("expires_in")
            .and_then(|e| e.as_u64())
            .unwrap_or(60)
            .max(60);
        Ok((format!("Bearer {token}"), Duration::from_secs(secs - 5)))
    }

    /// One HTTP exchange, following up to 5 redirects by hand. `Authorization` is only sent to
    /// the origin of the first URL.
    fn exchange(
        &self,
        method: Method,
        url: &str,
        auth: Option<&str>,
    ) -> Result<Reply, RegistryError> {
        let origin = origin_of(url).to_string();
        let mut current = url.to_string();
        for _hop in 0..=5 {
            self.requests.fetch_add(1, Ordering::Relaxed);
            let same_origin = origin_of(&current) == origin;
            let result = match method {
                Method::Head => {
                    let mut rb = self.agent.head(&current).header("Accept", ACCEPT);
                    if let (Some(a), true) = (auth, same_origin) {
                        rb = rb.header("Authorization", a);
                    }
                    rb.call()
                }
                Method::Get => {
                    let mut rb = self.agent.get(&current).header("Accept", ACCEPT);
                    if let (Some(a), true) = (auth, same_origin) {
                        rb = rb.header("Authorization", a);
                    }
                    rb.call()
                }
            };
            let mut resp = result.map_err(|e| map_ureq(&current, e))?;
            let status = resp.status().as_u16();
            let headers: Vec<(String, String)> = resp
                .headers()
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
            let location = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("location"))
                .map(|(_, v)| v.clone());
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                let loc = location.ok_or_else(|| RegistryError::Protocol {
                    url: current.clone(),
                    detail: format!("HTTP {status} without Location"),
                })?;
                if let Some(scheme) = foreign_scheme(&loc) {
                    return Err(RegistryError::Protocol {
                        url: current.clone(),
                        detail: format!(
                            "HTTP {status} redirect to a `{scheme}:` URL (`{}`), refused: only http and https are followed",
                            infx_report::escape_control(&loc)
                        ),
                    });
                }
                current = resolve_location(&current, &loc);
                continue;
            }
            let limit = if (200..300).contains(&status) {
                self.cfg.max_manifest_bytes
            } else {
                64 << 10
            };
            let announced = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse::<u64>().ok());
            let body = if method == Method::Head {
                Vec::new()
            } else if announced.is_some_and(|n| n > limit) {
                return Err(RegistryError::TooLarge {
                    url: current,
                    limit,
                });
            } else {
                resp.body_mut()
                    .with_config()
                    .limit(limit)
                    .read_to_vec()
                    .map_err(|e| map_ureq(&current, e))?
            };
            return Ok(Reply {
                status,
                headers,
                body,
                url: current,
            });
        }
        Err(RegistryError::Protocol {
            url: url.into(),
            detail: "more than 5 redirects".into(),
        })
    }
}

fn expect_ok(reply: &Reply) -> Result<(), RegistryError> {
    if (200..300).contains(&reply.status) {
        return Ok(());
    }
    Err(RegistryError::Http {
        url: reply.url.clone(),
        status: reply.status,
        detail: error_detail(&reply.body),
    })
}

fn protocol(reply: &Reply, detail: &str) -> RegistryError {
    RegistryError::Protocol {
        url: reply.url.clone(),
        detail: detail.into(),
    }
}

/// The first `errors[].code: message` of a distribution error body.
fn error_detail(body: &[u8]) -> String {
    let v: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let first = v
        .as_ref()
        .and_then(|v| v.get("errors"))
        .and_then(|e| e.get(0));
    match first {
        Some(e) => format!(
            "{}: {}",
            e.get("code").and_then(|c| c.as_str()).unwrap_or("?"),
            e.get("message").and_then(|c| c.as_str()).unwrap_or("")
        ),
        None => String::new(),
    }
}

fn rate_detail(reply: &Reply, retry_after: Option<Duration>) -> String {
    let mut parts = Vec::new();
    if let Some(d) = retry_after {
        parts.push(format!("Retry-After {}s", d.as_secs()));
    }
    for h in ["ratelimit-limit", "ratelimit-remaining"] {
        if let Some(v) = reply.header(h) {
            parts.push(format!("{h}: {v}"));
        }
    }
    let d = error_detail(&reply.body);
    if !d.is_empty() {
        parts.push(d);
    }
    parts.join("; ")
}

fn map_ureq(url: &str, e: ureq::Error) -> RegistryError {
    let url = url.to_string();
    match e {
        ureq::Error::Timeout(_) => RegistryError::Timeout { url },
        ureq::Error::BodyExceedsLimit(limit) => RegistryError::TooLarge { url, limit },
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
            RegistryError::Timeout { url }
        }
        other => RegistryError::Transport {
            url,
            detail: other.to_string(),
        },
    }
}

/// `scheme://host[:port]` of a URL.
fn origin_of(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    let end = url[after..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after + i);
    &url[..end]
}

/// The scheme of an absolute `Location` that is not http(s) (`file`, `ftp`, `data`…), which a
/// registry client must never follow; `None` for http(s) and for relative references.
fn foreign_scheme(loc: &str) -> Option<String> {
    let (scheme, _) = loc.split_once(':')?;
    let mut chars = scheme.chars();
    let is_scheme = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    let lower = scheme.to_ascii_lowercase();
    (is_scheme && lower != "http" && lower != "https").then_some(lower)
}

fn resolve_location(current: &str, loc: &str) -> String {
    if loc.starts_with("http://") || loc.starts_with("https://") {
        loc.to_string()
    } else if loc.starts_with("//") {
        let scheme = current.split("://").next().unwrap_or("https");
        format!("{scheme}:{loc}")
    } else if loc.starts_with('/') {
        format!("{}{loc}", origin_of(current))
    } else {
        let base = current.split(['?', '#']).next().unwrap_or(current);
        let dir = base.rfind('/').map_or(base, |i| &base[..=i]);
        format!("{dir}{loc}")
    }
}

/// A parsed `WWW-Authenticate` header (RFC 6750 / RFC 7235 auth-params).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    pub scheme: String,
    pub params: BTreeMap<String, String>,
}

pub fn parse_challenge(h: &str) -> Challenge {
    let h = h.trim();
    let (scheme, rest) = h.split_once(' ').unwrap_or((h, ""));
    let mut params = BTreeMap::new();
    let b = rest.as_bytes();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (b[i] == b',' || b[i] == b' ') {
            i += 1;
        }
        let ks = i;
        while i < b.len() && b[i] != b'=' && b[i] != b',' {
            i += 1;
        }
        let key = rest[ks..i].trim().to_ascii_lowercase();
        if i >= b.len() || b[i] != b'=' {
            continue;
        }
        i += 1;
        let mut val = String::new();
        if i < b.len() && b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' && i + 1 < b.len() {
                    i += 1;
                }
                let ch_end = next_char_end(rest, i);
                val.push_str(&rest[i..ch_end]);
                i = ch_end;
            }
            i += 1;
        } else {
            let vs = i;
            while i < b.len() && b[i] != b',' {
                i += 1;
            }
            val = rest[vs..i].trim().to_string();
        }
        if !key.is_empty() {
            params.insert(key, val);
        }
    }
    Challenge {
        scheme: scheme.to_string(),
        params,
    }
}

fn next_char_end(s: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < s.len() && !s.is_char_boundary(j) {
        j += 1;
    }
    j
}

fn urlencode(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

pub(crate) fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut o = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        o.push(T[(n >> 18) as usize & 63] as char);
        o.push(T[(n >> 12) as usize & 63] as char);
        o.push(if c.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        o.push(if c.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_parsing() {
        let c = parse_challenge(
            r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:a/b:pull,push",error="insufficient_scope""#,
        );
        assert_eq!(c.scheme, "Bearer");
        assert_eq!(c.params["realm"], "https://auth.docker.io/token");
        assert_eq!(c.params["service"], "registry.docker.io");
        assert_eq!(c.params["scope"], "repository:a/b:pull,push");
        assert_eq!(c.params["error"], "insufficient_scope");
        let b = parse_challenge("Basic realm=\"x\"");
        assert_eq!(b.scheme, "Basic");
        assert_eq!(b.params["realm"], "x");
        let odd = parse_challenge("Bearer realm=unquoted, service=\"s\\\"q\", junk");
        assert_eq!(odd.params["realm"], "unquoted");
        assert_eq!(odd.params["service"], "s\"q");
    }

    proptest::proptest! {
        #[test]
        fn challenge_parsing_never_panics(h in "\\PC{0,120}") {
            let _ = parse_challenge(&h);
        }

        #[test]
        fn quoted_values_round_trip(v in "[ -!#-\\[\\]-~é]{0,30}") {
            let c = parse_challenge(&format!("Bearer realm=\"{v}\",service=\"s\""));
            proptest::prop_assert_eq!(&c.params["realm"], &v);
            proptest::prop_assert_eq!(&c.params["service"], "s");
        }
    }

    #[test]
    fn base64_and_urlencode() {
        assert_eq!(base64(b"user:pass"), "dXNlcjpwYXNz");
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(
            urlencode("repository:a/b:pull"),
            "repository%3Aa%2Fb%3Apull"
        );
    }

    #[test]
    fn credentials_are_never_shown() {
        let c = Credential::from_user_password("me", "s3cret");
        assert_eq!(format!("{c:?}"), "Credential(<redacted>)");
        let cfg = ClientConfig {
            credentials: [("docker.io".to_string(), c)].into(),
            ..Default::default()
        };
        assert!(!format!("{cfg:?}").contains("s3cret"));
        assert!(!format!("{cfg:?}").contains(&base64(b"me:s3cret")));
    }

    #[test]
    fn docker_config_auths() {
        let text = r#"{"auths":{"https://index.docker.io/v1/":{"auth":"dXNlcjpwYXNz"},"nvcr.io":{"auth":"eDp5"},"bad":{"auth":"!!"}}}"#;
        let m = parse_docker_config(text).unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), ["docker.io", "nvcr.io"]);
        assert_eq!(
            m["docker.io"],
            Credential::from_user_password("user", "pass")
        );
        assert!(parse_docker_config("nope").is_err());
    }

    #[test]
    fn redirects_to_other_schemes_are_named() {
        assert_eq!(
            foreign_scheme("file:///etc/passwd").as_deref(),
            Some("file")
        );
        assert_eq!(foreign_scheme("FILE:/x").as_deref(), Some("file"));
        assert_eq!(foreign_scheme("https://h/x"), None);
        assert_eq!(foreign_scheme("/v2/x"), None);
        assert_eq!(foreign_scheme("blobs/sha256:abc"), None);
    }

    #[test]
    fn redirect_resolution() {
        assert_eq!(
            origin_of("http://127.0.0.1:5000/v2/x"),
            "http://127.0.0.1:5000"
        );
        assert_eq!(resolve_location("http://a:1/v2/x/y", "/z"), "http://a:1/z");
        assert_eq!(
            resolve_location("http://a:1/v2/x/y", "http://b:2/q"),
            "http://b:2/q"
        );
        assert_eq!(
            resolve_location("https://a/v2/x/y?q", "z"),
            "https://a/v2/x/z"
        );
        assert_eq!(resolve_location("https://a/v2/x", "//c/d"), "https://c/d");
    }

    #[test]
    fn hermetic_refuses_before_any_request() {
        let client = Client::new(ClientConfig {
            hermetic: true,
            ..Default::default()
        });
        let r = Reference::parse("lmsysorg/sglang:v1").unwrap();
        let e = client.head_manifest(&r, "v1").unwrap_err();
        assert!(matches!(e, RegistryError::Hermetic { .. }), "{e}");
        assert_eq!(client.stats().requests, 0);
        assert_eq!(client.base_url(&r), "https://registry-1.docker.io");
    }
}
