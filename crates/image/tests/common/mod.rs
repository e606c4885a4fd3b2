//! Test harness: a real `docker-registry` (CNCF Distribution) on 127.0.0.1 with an ephemeral
//! port and in-memory storage, a deterministic two-platform image fixture pushed over the
//! distribution API, a small token service, and a hand-rolled HTTP server for hostile cases.
#![allow(dead_code)]

use infx_image::Digest;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Finding tools: skip visibly outside CI, fail in CI.

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The tool, or `None` after printing `SKIP:`; panics when `CI` is set (CI must run these).
pub(crate) fn require_tool(test: &str, name: &str, env_override: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env_override) {
        return Some(PathBuf::from(p));
    }
    if let Some(p) = find_in_path(name) {
        return Some(p);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{test}: `{name}` is not installed but CI is set; install it (apt-get install -y docker-registry)"
        );
    }
    skip(&format!(
        "{test}: `{name}` not found in PATH (apt-get install -y docker-registry openssl)"
    ));
    None
}

/// Prints `SKIP: <why>` on the real stderr: `eprintln!` would be swallowed by the test
/// harness's output capture for a passing test.
pub(crate) fn skip(why: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "SKIP: {why}");
}

pub(crate) fn require_registry(test: &str) -> Option<PathBuf> {
    require_tool(test, "docker-registry", "INFX_DOCKER_REGISTRY")
}

// ---------------------------------------------------------------------------------------------
// The registry process.

pub(crate) struct Registry {
    pub port: u16,
    handle: Option<duct::Handle>,
    pub dir: tempfile::TempDir,
}

impl Registry {
    /// Starts a registry with in-memory storage; `extra` is appended to the config (e.g. an
    /// `auth:` section).
    pub(crate) fn start(bin: &Path, extra: &str) -> Registry {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = dir.path().join("config.yml");
        let text = format!(
            "version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: true\nstorage:\n  inmemory: {{}}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:0\n  secret: infx-test-secret\n{extra}"
        );
        std::fs::write(&cfg, text).expect("write config");
        let log = dir.path().join("registry.log");
        let mut cmd = duct::cmd(bin, [std::ffi::OsStr::new("serve"), cfg.as_os_str()])
            .stdout_null()
            .stderr_path(&log)
            .unchecked();
        // REGISTRY_* variables override config keys: never inherit them.
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("REGISTRY_") {
                cmd = cmd.env_remove(k);
            }
        }
        let handle = cmd.start().expect("start docker-registry");
        let deadline = Instant::now() + Duration::from_secs(15);
        let port = loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(i) = text.find("listening on 127.0.0.1:") {
                let rest = &text[i + "listening on 127.0.0.1:".len()..];
                let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                if let Ok(p) = digits.parse::<u16>() {
                    break p;
                }
            }
            if Instant::now() > deadline {
                let _ = handle.kill();
                panic!("docker-registry did not start; log:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let reg = Registry {
            port,
            handle: Some(handle),
            dir,
        };
        // Poll /v2/ until it answers (200, or 401 with token auth).
        let agent = agent();
        let deadline = Instant::now() + Duration::from_secs(10);
        while agent
            .get(&format!("{}/v2/", reg.url()))
            .call()
            .map(|r| r.status().as_u16())
            .unwrap_or(0)
            == 0
        {
            assert!(Instant::now() < deadline, "registry /v2/ never answered");
            std::thread::sleep(Duration::from_millis(10));
        }
        reg
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Kills the registry and asserts nothing listens on its port any more.
    pub(crate) fn stop(mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.kill();
            let _ = h.wait();
        }
        assert!(
            TcpStream::connect(("127.0.0.1", self.port)).is_err(),
            "a listener remains on {}",
            self.port
        );
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.kill();
            let _ = h.wait();
        }
    }
}

pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into()
}

// ---------------------------------------------------------------------------------------------
// Deterministic image fixture (docs/image.md, "Tests"): per platform one gzip'd USTAR layer, one
// config and one manifest; one index or manifest list over both. JSON is written canonically
// (sorted keys, no whitespace).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavour {
    Oci,
    Docker,
}

pub(crate) struct PlatformImage {
    pub arch: &'static str,
    pub manifest: Vec<u8>,
    pub media_type: &'static str,
}

pub(crate) struct Image {
    pub flavour: Flavour,
    pub blobs: Vec<Vec<u8>>,
    pub platforms: Vec<PlatformImage>,
    pub index: Vec<u8>,
    pub index_media_type: &'static str,
}

impl Image {
    pub(crate) fn index_digest(&self) -> Digest {
        Digest::sha256_of(&self.index)
    }
    pub(crate) fn platform_digest(&self, arch: &str) -> Digest {
        let p = self
            .platforms
            .iter()
            .find(|p| p.arch == arch)
            .expect("arch");
        Digest::sha256_of(&p.manifest)
    }
}

fn octal(field: &mut [u8], value: u64) {
    let s = format!("{:0width$o}\0", value, width = field.len() - 1);
    field.copy_from_slice(s.as_bytes());
}

/// A single-file USTAR archive with fixed metadata.
pub(crate) fn tar_one_file(name: &str, data: &[u8]) -> Vec<u8> {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    octal(&mut h[100..108], 0o644);
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    octal(&mut h[124..136], data.len() as u64);
    octal(&mut h[136..148], 0);
    h[148..156].copy_from_slice(b"        ");
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    let sum: u32 = h.iter().map(|&b| b as u32).sum();
    let chk = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(chk.as_bytes());
    let mut out = h.to_vec();
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out.extend_from_slice(&[0u8; 1024]);
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// gzip with stored (uncompressed) deflate blocks and mtime 0: valid and byte-stable.
pub(crate) fn gzip_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    let chunks: Vec<&[u8]> = if data.is_empty() {
        vec![&[][..]]
    } else {
        data.chunks(65535).collect()
    };
    for (i, c) in chunks.iter().enumerate() {
        out.push(if i + 1 == chunks.len() { 1 } else { 0 });
        let len = c.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(c);
    }
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

fn desc(media_type: &str, bytes: &[u8]) -> String {
    format!(
        r#"{{"digest":"{}","mediaType":"{media_type}","size":{}}}"#,
        Digest::sha256_of(bytes),
        bytes.len()
    )
}

/// Builds the fixture. `salt` changes the layer contents (a different set of digests, for the
/// "moved tag" case); `annotation` (OCI only) changes just the index digest.
pub(crate) fn build_image(flavour: Flavour, salt: &str, annotation: Option<&str>) -> Image {
    let (cfg_mt, layer_mt, man_mt, idx_mt) = match flavour {
        Flavour::Oci => (
            "application/vnd.oci.image.config.v1+json",
            "application/vnd.oci.image.layer.v1.tar+gzip",
            infx_image::manifest::OCI_MANIFEST,
            infx_image::manifest::OCI_INDEX,
        ),
        Flavour::Docker => (
            "application/vnd.docker.container.image.v1+json",
            "application/vnd.docker.image.rootfs.diff.tar.gzip",
            infx_image::manifest::DOCKER_MANIFEST,
            infx_image::manifest::DOCKER_LIST,
        ),
    };
    let mut blobs = Vec::new();
    let mut platforms = Vec::new();
    let mut entries = Vec::new();
    for (arch, variant) in [("amd64", None), ("arm64", Some("v8"))] {
        let tar = tar_one_file(
            "hello.txt",
            format!("infx fixture {arch} {salt}\n").as_bytes(),
        );
        let layer = gzip_stored(&tar);
        let variant_json = variant
            .map(|v| format!(r#","variant":"{v}""#))
            .unwrap_or_default();
        let config = format!(
            r#"{{"architecture":"{arch}","config":{{}},"created":"1970-01-01T00:00:00Z","os":"linux","rootfs":{{"diff_ids":["{}"],"type":"layers"}}{variant_json}}}"#,
            Digest::sha256_of(&tar)
        )
        .into_bytes();
        let manifest = format!(
            r#"{{"config":{},"layers":[{}],"mediaType":"{man_mt}","schemaVersion":2}}"#,
            desc(cfg_mt, &config),
            desc(layer_mt, &layer)
        )
        .into_bytes();
        entries.push(format!(
            r#"{{"digest":"{}","mediaType":"{man_mt}","platform":{{"architecture":"{arch}","os":"linux"{variant_json}}},"size":{}}}"#,
            Digest::sha256_of(&manifest),
            manifest.len()
        ));
        blobs.push(layer);
        blobs.push(config);
        platforms.push(PlatformImage {
            arch,
            manifest,
            media_type: man_mt,
        });
    }
    let annotations = match (flavour, annotation) {
        (Flavour::Oci, Some(a)) => format!(r#""annotations":{{"org.infx.test.ref":"{a}"}},"#),
        _ => String::new(),
    };
    let index = format!(
        r#"{{{annotations}"manifests":[{}],"mediaType":"{idx_mt}","schemaVersion":2}}"#,
        entries.join(",")
    )
    .into_bytes();
    Image {
        flavour,
        blobs,
        platforms,
        index,
        index_media_type: idx_mt,
    }
}

// ---------------------------------------------------------------------------------------------
// Pushing over the distribution API.

pub(crate) fn push_blob(
    agent: &ureq::Agent,
    base: &str,
    repo: &str,
    bytes: &[u8],
    auth: Option<&str>,
) {
    let digest = Digest::sha256_of(bytes);
    let with = |rb: ureq::RequestBuilder<ureq::typestate::WithoutBody>| match auth {
        Some(a) => rb.header("Authorization", a),
        None => rb,
    };
    let head = with(agent.head(&format!("{base}/v2/{repo}/blobs/{digest}")))
        .call()
        .expect("blob HEAD");
    if head.status() == 200 {
        return;
    }
    let post = {
        let mut rb = agent.post(&format!("{base}/v2/{repo}/blobs/uploads/"));
        if let Some(a) = auth {
            rb = rb.header("Authorization", a);
        }
        rb.send_empty().expect("POST upload")
    };
    assert_eq!(post.status(), 202, "POST upload for {repo}");
    let loc = post
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .expect("Location")
        .to_string();
    let loc = if loc.starts_with('/') {
        format!("{base}{loc}")
    } else {
        loc
    };
    let sep = if loc.contains('?') { '&' } else { '?' };
    let mut rb = agent
        .put(&format!("{loc}{sep}digest={digest}"))
        .header("Content-Type", "application/octet-stream");
    if let Some(a) = auth {
        rb = rb.header("Authorization", a);
    }
    let put = rb.send(bytes).expect("PUT blob");
    assert_eq!(put.status(), 201, "PUT blob {digest}");
}

pub(crate) fn put_manifest(
    agent: &ureq::Agent,
    base: &str,
    repo: &str,
    reference: &str,
    media_type: &str,
    bytes: &[u8],
    auth: Option<&str>,
) {
    let mut rb = agent
        .put(&format!("{base}/v2/{repo}/manifests/{reference}"))
        .header("Content-Type", media_type);
    if let Some(a) = auth {
        rb = rb.header("Authorization", a);
    }
    let mut r = rb.send(bytes).expect("PUT manifest");
    let status = r.status().as_u16();
    let body = r.body_mut().read_to_string().unwrap_or_default();
    assert_eq!(status, 201, "PUT manifest {repo}:{reference}: {body}");
}

/// Pushes the image: blobs, each platform manifest by digest and as `<tag>-<arch>`, then the
/// index as `<tag>`.
pub(crate) fn push_image(
    agent: &ureq::Agent,
    base: &str,
    repo: &str,
    tag: &str,
    img: &Image,
    auth: Option<&str>,
) {
    for b in &img.blobs {
        push_blob(agent, base, repo, b, auth);
    }
    for p in &img.platforms {
        let d = Digest::sha256_of(&p.manifest).to_string();
        put_manifest(agent, base, repo, &d, p.media_type, &p.manifest, auth);
        put_manifest(
            agent,
            base,
            repo,
            &format!("{tag}-{}", p.arch),
            p.media_type,
            &p.manifest,
            auth,
        );
    }
    put_manifest(
        agent,
        base,
        repo,
        tag,
        img.index_media_type,
        &img.index,
        auth,
    );
}

// ---------------------------------------------------------------------------------------------
// A hand-rolled HTTP/1.1 server for hostile cases and the token service.

#[derive(Clone, Debug)]
pub(crate) struct Req {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
}

impl Req {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub(crate) struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub delay: Duration,
    /// Send no Content-Length (the body ends when the connection closes).
    pub no_length: bool,
}

impl Resp {
    pub(crate) fn new(status: u16) -> Resp {
        Resp {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            delay: Duration::ZERO,
            no_length: false,
        }
    }
    pub(crate) fn header(mut self, k: &str, v: &str) -> Resp {
        self.headers.push((k.into(), v.into()));
        self
    }
    pub(crate) fn body(mut self, b: impl Into<Vec<u8>>) -> Resp {
        self.body = b.into();
        self
    }
    pub(crate) fn no_length(mut self) -> Resp {
        self.no_length = true;
        self
    }
    pub(crate) fn delay(mut self, d: Duration) -> Resp {
        self.delay = d;
        self
    }
}

type Handler = dyn Fn(&Req) -> Resp + Send + Sync;

pub(crate) struct FakeServer {
    pub port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    pub log: Arc<Mutex<Vec<Req>>>,
}

impl FakeServer {
    pub(crate) fn start(handler: impl Fn(&Req) -> Resp + Send + Sync + 'static) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let (s, l) = (stop.clone(), log.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (h, l) = (handler.clone(), l.clone());
                std::thread::spawn(move || serve(conn, &*h, &l));
            }
        });
        FakeServer {
            port,
            stop,
            thread: Some(thread),
            log,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub(crate) fn requests(&self) -> Vec<Req> {
        self.log.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(conn: TcpStream, handler: &Handler, log: &Mutex<Vec<Req>>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(match conn.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut content_length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                content_length = v.trim().parse().unwrap_or(0);
            }
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut body = vec![0u8; content_length];
    let _ = reader.read_exact(&mut body);
    let req = Req {
        method: method.clone(),
        path,
        headers,
    };
    if let Ok(mut l) = log.lock() {
        l.push(req.clone());
    }
    let resp = handler(&req);
    std::thread::sleep(resp.delay);
    let mut out = format!("HTTP/1.1 {} X\r\nConnection: close\r\n", resp.status);
    if !resp.no_length {
        out.push_str(&format!("Content-Length: {}\r\n", resp.body.len()));
    }
    for (k, v) in &resp.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let mut conn = conn;
    let _ = conn.write_all(out.as_bytes());
    if method != "HEAD" {
        let _ = conn.write_all(&resp.body);
    }
    let _ = conn.flush();
}

// ---------------------------------------------------------------------------------------------
// Token service (Docker token-authentication spec): RS256 JWTs signed by `openssl`, key id in
// libtrust format.

pub(crate) struct TokenService {
    pub server: FakeServer,
    pub dir: tempfile::TempDir,
}

fn b64url(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut o = String::new();
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        o.push(T[(n >> 18) as usize & 63] as char);
        o.push(T[(n >> 12) as usize & 63] as char);
        if c.len() > 1 {
            o.push(T[(n >> 6) as usize & 63] as char);
        }
        if c.len() > 2 {
            o.push(T[n as usize & 63] as char);
        }
    }
    o
}

fn base32(data: &[u8]) -> String {
    const T: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut o = String::new();
    let (mut buf, mut bits) = (0u64, 0u32);
    for &b in data {
        buf = (buf << 8) | b as u64;
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            o.push(T[((buf >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        o.push(T[((buf << (5 - bits)) & 31) as usize] as char);
    }
    o
}

/// libtrust key id: SHA-256 of the DER SubjectPublicKeyInfo, first 30 bytes, base32, `:`-grouped by 4.
fn libtrust_kid(spki_der: &[u8]) -> String {
    use sha2::Digest as _;
    let h = sha2::Sha256::digest(spki_der);
    let b = base32(&h[..30]);
    b.as_bytes()
        .chunks(4)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join(":")
}

fn query_params(path: &str) -> Vec<(String, String)> {
    let q = path.split_once('?').map(|(_, q)| q).unwrap_or("");
    q.split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), percent_decode(v)))
        .collect()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl TokenService {
    /// `deny_repo`: a repository this service grants nothing for (insufficient scope).
    pub(crate) fn start(openssl: &Path, deny_repo: Option<&'static str>) -> TokenService {
        let dir = tempfile::tempdir().expect("tempdir");
        let key = dir.path().join("key.pem");
        let cert = dir.path().join("cert.pem");
        duct::cmd(
            openssl,
            [
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=infx-test-token",
            ]
            .iter()
            .map(std::ffi::OsString::from)
            .chain([
                "-keyout".into(),
                key.clone().into_os_string(),
                "-out".into(),
                cert.clone().into_os_string(),
            ]),
        )
        .stdout_null()
        .stderr_null()
        .run()
        .expect("openssl req");
        let spki = duct::cmd(
            openssl,
            [
                std::ffi::OsString::from("pkey"),
                "-in".into(),
                key.clone().into_os_string(),
                "-pubout".into(),
                "-outform".into(),
                "DER".into(),
            ],
        )
        .stdout_capture()
        .stderr_null()
        .run()
        .expect("openssl pkey")
        .stdout;
        let kid = libtrust_kid(&spki);
        let openssl = openssl.to_path_buf();
        let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let server = FakeServer::start(move |req| {
            if !req.path.starts_with("/token") {
                return Resp::new(404);
            }
            let params = query_params(&req.path);
            let service = params
                .iter()
                .find(|(k, _)| k == "service")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            let has_creds = req
                .header("authorization")
                .is_some_and(|a| a.starts_with("Basic "));
            let mut access = Vec::new();
            for (_, scope) in params.iter().filter(|(k, _)| k == "scope") {
                // repository:<name>:<actions>
                let mut it = scope.splitn(3, ':');
                let (Some(typ), Some(name), Some(actions)) = (it.next(), it.next(), it.next())
                else {
                    continue;
                };
                if Some(name) == deny_repo {
                    continue;
                }
                let acts: Vec<String> = actions
                    .split(',')
                    .filter(|a| has_creds || *a == "pull")
                    .map(|a| format!("\"{a}\""))
                    .collect();
                access.push(format!(
                    r#"{{"actions":[{}],"name":"{name}","type":"{typ}"}}"#,
                    acts.join(",")
                ));
            }
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            let jti = counter.fetch_add(1, Ordering::Relaxed);
            let sub = if has_creds { "tester" } else { "anonymous" };
            let header = format!(r#"{{"alg":"RS256","kid":"{kid}","typ":"JWT"}}"#);
            let claims = format!(
                r#"{{"access":[{}],"aud":"{service}","exp":{},"iat":{now},"iss":"test-issuer","jti":"{jti}","nbf":{},"sub":"{sub}"}}"#,
                access.join(","),
                now + 300,
                now.saturating_sub(10)
            );
            let signing_input = format!(
                "{}.{}",
                b64url(header.as_bytes()),
                b64url(claims.as_bytes())
            );
            let sig = duct::cmd(
                &openssl,
                [
                    std::ffi::OsString::from("dgst"),
                    "-sha256".into(),
                    "-sign".into(),
                    key.clone().into_os_string(),
                ],
            )
            .stdin_bytes(signing_input.clone())
            .stdout_capture()
            .stderr_null()
            .run();
            let Ok(sig) = sig else { return Resp::new(500) };
            let token = format!("{signing_input}.{}", b64url(&sig.stdout));
            Resp::new(200)
                .header("Content-Type", "application/json")
                .body(format!(r#"{{"access_token":"{token}","expires_in":300,"issued_at":"1970-01-01T00:00:00Z","token":"{token}"}}"#))
        });
        TokenService { server, dir }
    }

    pub(crate) fn cert_path(&self) -> PathBuf {
        self.dir.path().join("cert.pem")
    }

    /// The registry config section pointing at this service.
    pub(crate) fn registry_auth_config(&self) -> String {
        format!(
            "auth:\n  token:\n    realm: {}/token\n    service: test-registry\n    issuer: test-issuer\n    rootcertbundle: {}\n",
            self.server.url(),
            self.cert_path().display()
        )
    }

    pub(crate) fn token_requests(&self) -> usize {
        self.server
            .requests()
            .iter()
            .filter(|r| r.path.starts_with("/token"))
            .count()
    }

    /// A push+pull token for `repo`, obtained with Basic credentials.
    pub(crate) fn push_token(&self, repo: &str) -> String {
        let url = format!(
            "{}/token?service=test-registry&scope=repository:{repo}:pull,push",
            self.server.url()
        );
        let mut r = agent()
            .get(&url)
            .header("Authorization", "Basic dGVzdGVyOnB3")
            .call()
            .expect("token");
        let body = r.body_mut().read_to_string().expect("token body");
        let v: serde_json::Value = serde_json::from_str(&body).expect("token json");
        format!("Bearer {}", v["token"].as_str().expect("token field"))
    }
}

#[test]
fn harness_encoders() {
    assert_eq!(base32(b"foobar"), "MZXW6YTBOI");
    assert_eq!(b64url(&[0xfb, 0xff]), "-_8");
    assert_eq!(
        percent_decode("repository%3Aa%2Fb%3Apull"),
        "repository:a/b:pull"
    );
    // gzip stored blocks decode to the input: check the trailer fields at least.
    let g = gzip_stored(b"abc");
    assert_eq!(&g[g.len() - 4..], &3u32.to_le_bytes());
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    let t = tar_one_file("a", b"x");
    assert_eq!(t.len(), 512 * 4);
}
