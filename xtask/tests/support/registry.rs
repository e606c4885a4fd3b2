//! A loopback OCI registry for scenario tests: every `repository:tag` is a two-platform index
//! whose bytes depend on the repository, the tag and a version the test can bump per tag
//! ("the tag moved"); tags named `missing` answer 404. Listens on 127.0.0.1 on an ephemeral
//! port; stopped when dropped.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) struct Registry {
    pub url: String,
    /// `repository:tag` → version (default 1).
    versions: Arc<Mutex<HashMap<String, u32>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn index(name_tag: &str, version: u32) -> String {
    let d = format!("sha256:{}", "0".repeat(64));
    format!(
        r#"{{"annotations":{{"ref":"{name_tag}","v":"{version}"}},"manifests":[{{"digest":"{d}","mediaType":"application/vnd.oci.image.manifest.v1+json","platform":{{"architecture":"amd64","os":"linux"}},"size":1}},{{"digest":"{d}","mediaType":"application/vnd.oci.image.manifest.v1+json","platform":{{"architecture":"arm64","os":"linux"}},"size":1}}],"mediaType":"application/vnd.oci.image.index.v1+json","schemaVersion":2}}"#
    )
}

fn sha256_hex(bytes: &[u8]) -> String {
    let d = infx_image::Digest::sha256_of(bytes).to_string();
    d.trim_start_matches("sha256:").to_string()
}

impl Registry {
    pub(crate) fn start() -> Registry {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let versions: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (v2, s2) = (versions.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            // Every index served so far, by digest (pins are fetched by digest too).
            let mut served: BTreeMap<String, String> = BTreeMap::new();
            for conn in listener.incoming() {
                if s2.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(conn) = conn {
                    answer(conn, &v2, &mut served);
                }
            }
        });
        Registry {
            url,
            versions,
            stop,
            thread: Some(thread),
        }
    }

    /// Moves `repository:tag` (e.g. `lmsysorg/sglang:v1`) to new content.
    pub(crate) fn move_tag(&self, name_tag: &str) {
        let mut v = self.versions.lock().expect("lock");
        *v.entry(name_tag.to_string()).or_insert(1) += 1;
    }

    /// The digest `repository:tag` resolves to now.
    pub(crate) fn digest_of(&self, name_tag: &str) -> String {
        let v = *self
            .versions
            .lock()
            .expect("lock")
            .get(name_tag)
            .unwrap_or(&1);
        format!("sha256:{}", sha256_hex(index(name_tag, v).as_bytes()))
    }
}

fn answer(
    mut conn: TcpStream,
    versions: &Mutex<HashMap<String, u32>>,
    served: &mut BTreeMap<String, String>,
) {
    let Ok(clone) = conn.try_clone() else { return };
    let mut reader = BufReader::new(clone);
    let mut line = String::new();
    let _ = reader.read_line(&mut line);
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let head = line.starts_with("HEAD");
    // /v2/<name>/manifests/<reference>
    let body = path
        .strip_prefix("/v2/")
        .and_then(|rest| rest.rsplit_once("/manifests/"))
        .and_then(|(name, reference)| {
            if reference.starts_with("sha256:") {
                served.get(reference).cloned()
            } else if reference == "missing" {
                None
            } else {
                let key = format!("{name}:{reference}");
                let v = *versions.lock().ok()?.get(&key).unwrap_or(&1);
                let text = index(&key, v);
                served.insert(
                    format!("sha256:{}", sha256_hex(text.as_bytes())),
                    text.clone(),
                );
                Some(text)
            }
        });
    let resp = match body {
        Some(text) => format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.index.v1+json\r\nDocker-Content-Digest: sha256:{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
            sha256_hex(text.as_bytes()),
            text.len(),
            if head { "" } else { text.as_str() }
        ),
        None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into(),
    };
    let _ = conn.write_all(resp.as_bytes());
    let _ = conn.set_read_timeout(Some(Duration::from_millis(1)));
    let mut sink = Vec::new();
    let _ = reader.read_to_end(&mut sink);
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
