//! `cargo xtask pin [--check] [PATHS…]` (owner: image): pin image references to their
//! multi-arch index digests, or verify existing pins.

use crate::output::{self, Format};
use infx_image::pin::{self, Plan};
use infx_image::verify::VerifyOptions;
use infx_image::{Client, ClientConfig, Credential, Platform};
use infx_report::{Diagnostic, Severity, SourceMap, sort_for_report};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Files or directories to pin (default: the tree's master configs and recipes).
    pub paths: Vec<PathBuf>,
    /// The benchmark tree searched when no PATHS are given. Default: `inferencex-e2e/` of the
    /// git work tree enclosing the current directory, or that work tree itself when it has none.
    #[arg(long, default_value_os_t = crate::paths::default_tree(), hide_default_value = true)]
    pub root: PathBuf,
    /// Verify existing pins instead (HEAD requests only: no pull counted): tells "tag moved",
    /// "digest gone" and "digest is a platform manifest" apart.
    #[arg(long)]
    pub check: bool,
    /// With --check: also GET each index (one pull each) to verify its bytes and platform list.
    #[arg(long, requires = "check")]
    pub deep: bool,
    /// Show what would change, write nothing.
    #[arg(long, conflicts_with = "check")]
    pub dry_run: bool,
    /// A platform the index must cover (repeatable). Default: linux/amd64 and linux/arm64.
    #[arg(long = "platform", value_name = "OS/ARCH[/VARIANT]")]
    pub platforms: Vec<String>,
    /// Serve a registry name from another base URL, e.g. `docker.io=http://127.0.0.1:5000`
    /// (repeatable). The only way to use plain HTTP.
    #[arg(long = "registry-override", value_name = "NAME=URL")]
    pub overrides: Vec<String>,
    /// No network at all: any registry request is an error. Implied inside a Nix build.
    #[arg(long)]
    pub hermetic: bool,
    /// Parallel registry requests.
    #[arg(long, short = 'j', default_value_t = 8)]
    pub jobs: usize,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// Output format for diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let required = match parse_platforms(&args.platforms) {
        Ok(p) => p,
        Err(e) => return Ok(usage(&e)),
    };
    let overrides = match parse_overrides(&args.overrides) {
        Ok(o) => o,
        Err(e) => return Ok(usage(&e)),
    };
    let files = match collect_files(&args.root, &args.paths) {
        Ok(f) => f,
        Err(Refused::Usage(e)) => return Ok(usage(&e)),
        // An unreadable folder or a refused file is a failure of the tree, not of the command
        // line: exit 1, not the usage code 2.
        Err(Refused::Tree(e)) => {
            eprintln!("error: {}", crate::hygiene::escape_line(&e));
            return Ok(ExitCode::from(1));
        }
    };
    let client = registry_client(
        args.hermetic,
        overrides,
        Duration::from_secs(args.timeout.max(1)),
    );
    let jobs = args.jobs.max(1);

    // Shown (and opened) relative to the working directory when below it.
    let cwd = std::env::current_dir().unwrap_or_default();
    let files: Vec<PathBuf> = files
        .into_iter()
        .map(|f| f.strip_prefix(&cwd).map(Path::to_path_buf).unwrap_or(f))
        .collect();
    let loaded = pin::load(&files);
    let mut sources = SourceMap::new();
    for d in &loaded.docs {
        sources.insert(&d.path, d.text.to_string());
    }
    if loaded
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error)
    {
        emit(loaded.diagnostics, &sources, args.format);
        eprintln!("pin: the files above do not load; nothing was checked or written");
        return Ok(ExitCode::from(1));
    }
    let mut diags = loaded.diagnostics.clone();
    let progress = Progress::new(if args.check { "verifying" } else { "resolving" });

    if args.check {
        diags.extend(infx_image::check_offline(&loaded.sites));
        let opts = VerifyOptions {
            deep: args.deep,
            required,
        };
        diags.extend(infx_image::check_online(
            &client,
            &loaded.sites,
            &opts,
            jobs,
            &|n, t| progress.tick(n, t),
        ));
        progress.finish();
        let errors = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let pinned = loaded
            .sites
            .iter()
            .filter(|s| s.written.contains('@'))
            .count();
        emit(diags, &sources, args.format);
        eprintln!(
            "pin --check: {} references in {} files ({pinned} pinned), {errors} error(s)",
            loaded.sites.len(),
            loaded.docs.len()
        );
        return Ok(ExitCode::from(u8::from(errors > 0)));
    }

    let resolved = pin::resolve_sites(&client, &loaded.sites, &required, jobs, &|n, t| {
        progress.tick(n, t)
    });
    progress.finish();
    let plan: Plan = pin::plan(&loaded.docs, &loaded.sites, &resolved);
    diags.extend(plan.diagnostics.iter().cloned());
    let failed = plan.has_errors();
    emit(diags, &sources, args.format);
    if failed {
        eprintln!("pin: failed; nothing was written");
        return Ok(ExitCode::from(1));
    }
    // Written first, reported after: a `before -> after` line is only printed for a pin that is
    // on disk (or, with --dry-run, one that would be).
    if !args.dry_run {
        pin::write_all(&plan.files).map_err(|e| anyhow::anyhow!("writing pins: {e}"))?;
    }
    let mut out = std::io::stdout().lock();
    for c in &plan.changes {
        // File names and references come from the tree: one line each, no forged commands.
        let line = format!(
            "{}:{}:{}: {} -> {}",
            infx_report::escape_control(&c.path.display().to_string()),
            c.span.start.line,
            c.span.start.col,
            c.before,
            c.after
        );
        writeln!(out, "{}", crate::hygiene::escape_line(&line))?;
    }
    let verb = if args.dry_run { "would pin" } else { "pinned" };
    eprintln!(
        "pin: {verb} {} of {} references in {} file(s); {} distinct tags resolved",
        plan.changes.len(),
        loaded.sites.len(),
        plan.files.len(),
        resolved.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// A registry client set up the way `pin` uses it: credentials from the Docker config or the
/// `INFX_REGISTRY_*` variables, hermetic when asked or when `INFX_HERMETIC` / `NIX_BUILD_TOP`
/// is set. `validate --online` uses it too.
pub fn registry_client(
    hermetic: bool,
    overrides: BTreeMap<String, String>,
    timeout: Duration,
) -> Client {
    let hermetic = hermetic || env_set("INFX_HERMETIC") || env_set("NIX_BUILD_TOP");
    Client::new(ClientConfig {
        timeout,
        overrides,
        credentials: load_credentials(),
        hermetic,
        ..Default::default()
    })
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

fn env_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty())
}

fn emit(mut diags: Vec<Diagnostic>, sources: &SourceMap, format: Format) {
    if diags.is_empty() {
        return;
    }
    sort_for_report(&mut diags);
    print!("{}", output::render(&diags, sources, format));
}

fn parse_platforms(list: &[String]) -> Result<Vec<Platform>, String> {
    if list.is_empty() {
        return Ok(Platform::defaults());
    }
    list.iter()
        .map(|s| {
            Platform::parse(s).ok_or_else(|| {
                format!("--platform `{s}`: expected OS/ARCH[/VARIANT], e.g. linux/arm64")
            })
        })
        .collect()
}

/// Why the authority (`host[:port]`) of an override URL is unusable, if it is: an empty host,
/// an empty or non-numeric port (`http://127.0.0.1:/` would silently mean port 80), a port
/// above 65535, or user info.
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
        Some(p) if !p.bytes().all(|b| b.is_ascii_digit()) || p.parse::<u16>().is_err() => {
            Some("the port must be a number from 0 to 65535")
        }
        _ => None,
    }
}

fn parse_overrides(list: &[String]) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for raw in list {
        // The value is echoed in errors: never raw (NUL, ESC, newlines).
        let s = infx_report::escape_control(raw);
        let (name, url) = raw
            .split_once('=')
            .ok_or_else(|| format!("--registry-override `{s}`: expected NAME=URL"))?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!(
                "--registry-override `{s}`: the URL must start with http:// or https://"
            ));
        }
        if url.chars().any(char::is_control) {
            return Err(format!(
                "--registry-override `{s}`: the URL contains control characters"
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

/// Why no file list came out of the arguments.
enum Refused {
    /// The command line names nothing usable (exit 2).
    Usage(String),
    /// The tree could not be read as the command line asks (exit 1).
    Tree(String),
}

fn collect_files(root: &Path, paths: &[PathBuf]) -> Result<Vec<PathBuf>, Refused> {
    if paths.is_empty() {
        if !root.is_dir() {
            return Err(Refused::Usage(format!(
                "{} is not a directory (use --root or give PATHS)",
                root.display()
            )));
        }
        return pin::discover(root)
            .map_err(|e| Refused::Tree(format!("reading {}: {e}", root.display())));
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            pin::yaml_files(p, &mut out)
                .map_err(|e| Refused::Tree(format!("reading {}: {e}", p.display())))?;
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(Refused::Usage(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
    }
    Ok(out)
}

/// Registry credentials: `$DOCKER_CONFIG/config.json` or `~/.docker/config.json` (`auths`
/// only), plus `INFX_REGISTRY_HOST` / `INFX_REGISTRY_USER` / `INFX_REGISTRY_PASSWORD`.
/// Never printed.
fn load_credentials() -> BTreeMap<String, Credential> {
    let dir = std::env::var_os("DOCKER_CONFIG")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker")));
    let mut creds = BTreeMap::new();
    if let Some(file) = dir.map(|d| d.join("config.json")).filter(|f| f.is_file()) {
        match std::fs::read_to_string(&file)
            .map_err(|e| e.to_string())
            .and_then(|t| infx_image::parse_docker_config(&t))
        {
            Ok(c) => creds = c,
            Err(e) => eprintln!(
                "warning: ignoring {}",
                crate::hygiene::escape_line(&format!("{}: {e}", file.display()))
            ),
        }
    }
    if let (Ok(host), Ok(user), Ok(pass)) = (
        std::env::var("INFX_REGISTRY_HOST"),
        std::env::var("INFX_REGISTRY_USER"),
        std::env::var("INFX_REGISTRY_PASSWORD"),
    ) {
        creds.insert(host, Credential::from_user_password(&user, &pass));
    }
    creds
}

/// A one-line progress bar on stderr, only when stderr is a terminal.
struct Progress {
    on: bool,
    what: &'static str,
}

impl Progress {
    fn new(what: &'static str) -> Progress {
        Progress {
            on: std::io::stderr().is_terminal(),
            what,
        }
    }
    fn tick(&self, n: usize, total: usize) {
        if !self.on || total == 0 {
            return;
        }
        let width = 30;
        let filled = n * width / total;
        eprint!(
            "\r{} [{}{}] {n}/{total}",
            self.what,
            "#".repeat(filled),
            " ".repeat(width - filled)
        );
    }
    fn finish(&self) {
        if self.on {
            eprint!("\r\x1b[2K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read};
    use std::net::TcpListener;

    fn sha256(b: &[u8]) -> String {
        infx_image::Digest::sha256_of(b).to_string()
    }

    /// A minimal registry: every tag of every repository is the same two-platform index, whose
    /// content depends on `version` (bump it to "move" every tag).
    fn fake_registry(
        version: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    ) -> (
        String,
        std::thread::JoinHandle<()>,
        std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s2 = stop.clone();
        let h = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s2.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                }
                let v = version.load(std::sync::atomic::Ordering::SeqCst);
                let d = "sha256:".to_string() + &"0".repeat(64);
                let index = format!(
                    r#"{{"annotations":{{"v":"{v}"}},"manifests":[{{"digest":"{d}","mediaType":"application/vnd.oci.image.manifest.v1+json","platform":{{"architecture":"amd64","os":"linux"}},"size":1}},{{"digest":"{d}","mediaType":"application/vnd.oci.image.manifest.v1+json","platform":{{"architecture":"arm64","os":"linux"}},"size":1}}],"mediaType":"application/vnd.oci.image.index.v1+json","schemaVersion":2}}"#
                );
                let digest = sha256(index.as_bytes());
                let path = line.split_whitespace().nth(1).unwrap_or("");
                let found = !path.contains("/manifests/sha256:") || path.ends_with(&digest);
                let head = line.starts_with("HEAD");
                let resp = if found {
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.index.v1+json\r\nDocker-Content-Digest: {digest}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                        index.len(),
                        if head { "" } else { index.as_str() }
                    )
                } else {
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .to_string()
                };
                let _ = conn.write_all(resp.as_bytes());
                let mut sink = Vec::new();
                let _ = conn.set_read_timeout(Some(Duration::from_millis(1)));
                let _ = reader.read_to_end(&mut sink);
            }
        });
        (format!("http://127.0.0.1:{port}"), h, stop)
    }

    fn pin(args: &[&str]) -> u8 {
        let mut argv = vec!["cargo xtask", "pin"];
        argv.extend_from_slice(args);
        let code = crate::main_with_args(argv);
        // ExitCode has no accessor; compare against the known values.
        [0u8, 1, 2]
            .into_iter()
            .find(|c| ExitCode::from(*c) == code)
            .unwrap_or(255)
    }

    const PIN_CLI_TEST: &str = "cmd_pin::tests::pin_check_and_idempotence_via_the_cli";

    /// Runs the test `name` of this test binary in a child process with `env` changed; panics
    /// unless it ran and passed.
    fn run_test_in_child(name: &str, set: &[(&str, &str)], remove: &[&str]) {
        let exe = std::env::current_exe().expect("test binary");
        let mut cmd = duct::cmd(exe, ["--exact", name, "--test-threads=1"]);
        for (k, v) in set {
            cmd = cmd.env(k, v);
        }
        for k in remove {
            cmd = cmd.env_remove(k);
        }
        let out = cmd
            .stdin_null()
            .stderr_to_stdout()
            .stdout_capture()
            .unchecked()
            .run()
            .expect("run the test binary");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("1 passed"), "{text}");
    }

    /// A Nix build (`checks.tests`) sets NIX_BUILD_TOP, which makes pin hermetic (so does
    /// INFX_HERMETIC); this test's registry is on loopback, so it runs again without them.
    fn rerun_without_hermetic_env() -> bool {
        let hermetic_env = ["NIX_BUILD_TOP", "INFX_HERMETIC"];
        if hermetic_env.iter().all(|k| std::env::var_os(k).is_none()) {
            return false;
        }
        run_test_in_child(PIN_CLI_TEST, &[], &hermetic_env);
        true
    }

    /// The conditions of `checks.tests` in the Nix sandbox (docs/nix-and-ci.md), outside Nix.
    #[test]
    fn pin_cli_test_passes_under_the_nix_build_environment() {
        run_test_in_child(
            PIN_CLI_TEST,
            &[
                ("NIX_BUILD_TOP", "/build"),
                ("INFX_HERMETIC", "1"),
                ("HOME", "/homeless-shelter"),
            ],
            &[],
        );
    }

    #[test]
    fn pin_check_and_idempotence_via_the_cli() {
        if rerun_without_hermetic_env() {
            return;
        }
        let version = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(1));
        let (url, handle, stop) = fake_registry(version.clone());
        let dir = tempfile::tempdir().unwrap();
        let configs = dir.path().join("configs");
        std::fs::create_dir_all(&configs).unwrap();
        let master = configs.join("nvidia-master.yaml");
        let original = "# header comment\na:\n  image: lmsysorg/sglang:v1   # pinned by infx\n  model: m\nb:\n  image: \"nvcr.io#nvidia/x:1.0\"\n";
        std::fs::write(&master, original).unwrap();
        let root = dir.path().to_str().unwrap();
        let ov1 = format!("docker.io={url}");
        let ov2 = format!("nvcr.io={url}");
        let common = [
            "--root",
            root,
            "--registry-override",
            &ov1,
            "--registry-override",
            &ov2,
        ];

        // Hermetic: fails, writes nothing.
        let mut hermetic = common.to_vec();
        hermetic.push("--hermetic");
        assert_eq!(pin(&hermetic), 1);
        assert_eq!(std::fs::read_to_string(&master).unwrap(), original);

        // Unpinned refs fail --check.
        let mut check = common.to_vec();
        check.push("--check");
        assert_eq!(pin(&check), 1);

        assert_eq!(pin(&common), 0);
        let pinned = std::fs::read_to_string(&master).unwrap();
        assert_ne!(pinned, original);
        let re_stripped: String = {
            let mut s = pinned.clone();
            while let Some(i) = s.find("@sha256:") {
                s.replace_range(i..i + 8 + 64, "");
            }
            s
        };
        assert_eq!(re_stripped, original, "only the digests were added");
        assert_eq!(pin(&common), 0);
        assert_eq!(
            std::fs::read_to_string(&master).unwrap(),
            pinned,
            "second run changes nothing"
        );
        assert_eq!(pin(&check), 0);

        // The tags move: --check fails, the file stays.
        version.store(2, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(pin(&check), 1);
        assert_eq!(std::fs::read_to_string(&master).unwrap(), pinned);

        // Usage errors.
        assert_eq!(pin(&["--root", root, "--platform", "linux"]), 2);
        assert_eq!(
            pin(&[
                "--root",
                root,
                "--registry-override",
                "docker.io=http://127.0.0.1:"
            ]),
            2
        );
        assert_eq!(
            pin(&["--root", root, "--registry-override", "docker.io"]),
            2
        );

        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(url.trim_start_matches("http://"));
        handle.join().unwrap();
    }

    #[test]
    fn override_urls_need_a_host_and_a_real_port() {
        let one = |v: &str| parse_overrides(&[v.to_string()]);
        assert!(one("docker.io=http://127.0.0.1:5000").is_ok());
        assert!(one("docker.io=https://mirror.example/").is_ok());
        assert!(one("docker.io=http://[::1]:5000/").is_ok());
        for (bad, why) in [
            ("docker.io=http://127.0.0.1:", "port after `:` is empty"),
            ("docker.io=http://127.0.0.1:/v2", "port after `:` is empty"),
            ("docker.io=http://[::1]:", "port after `:` is empty"),
            ("docker.io=http://:5000", "host is empty"),
            ("docker.io=http://h:99999", "0 to 65535"),
            ("docker.io=http://h:5x", "0 to 65535"),
            ("docker.io=http://u:p@h:1", "credentials"),
        ] {
            let e = one(bad).expect_err(bad);
            assert!(e.contains(why), "{bad}: {e}");
        }
        let e = one("docker.io=http://h\0\u{1b}[2J:1").expect_err("control characters");
        assert!(!e.contains('\0') && !e.contains('\u{1b}'), "{e:?}");
        assert!(e.contains("\\u{0}"), "{e:?}");
    }
}
