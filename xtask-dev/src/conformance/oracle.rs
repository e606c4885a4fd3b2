//! What the random differential suites share: the reference tarballs of ../shared/reference,
//! a Python virtual environment per oracle under the checkout's `target/`, and one seedable
//! random number generator (docs/recipe.md and docs/changelog.md, "Random differential").

use std::path::PathBuf;
use std::process::Command;

/// `tarball` in the reference directory, when present.
pub fn reference_tarball(tarball: &str) -> Option<PathBuf> {
    let path = xtask::paths::reference_dir()?.join(tarball);
    path.is_file().then_some(path)
}

/// A virtual environment `target/<name>/V` holding `tarball` unpacked beside it and the
/// packages `pip_install` names (pip's arguments after `install -q`). Made once; later runs
/// reuse it while the `ready` marker exists. Returns (python, the environment's home); `Err`
/// carries the reason, to print as a SKIP.
pub fn venv(name: &str, tarball: &str, pip_install: &[&str]) -> Result<(PathBuf, PathBuf), String> {
    let archive = reference_tarball(tarball)
        .ok_or_else(|| format!("../shared/reference/{tarball} not found"))?;
    let home = xtask::paths::tools_target().join(name);
    let python = home.join("V/bin/python");
    let marker = home.join("ready");
    if marker.is_file() && python.is_file() {
        return Ok((python, home));
    }
    std::fs::create_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;
    let step = |cmd: &mut Command, what: &str| -> Result<(), String> {
        let out = cmd
            .current_dir(&home)
            .output()
            .map_err(|e| format!("{what}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            let err = String::from_utf8_lossy(&out.stderr);
            let tail: String = err.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
            Err(format!("{what} failed: {tail}"))
        }
    };
    step(
        Command::new("tar").arg("xzf").arg(&archive),
        &format!("unpacking {tarball}"),
    )?;
    step(
        Command::new("python3").args(["-m", "venv", "V"]),
        "python3 -m venv",
    )?;
    let mut pip = vec!["-m", "pip", "install", "-q"];
    pip.extend_from_slice(pip_install);
    step(
        Command::new(&python).args(&pip),
        &format!("pip install {} (needs PyPI)", pip_install.join(" ")),
    )?;
    std::fs::write(&marker, "").map_err(|e| e.to_string())?;
    Ok((python, home))
}

/// splitmix64: small, seedable and the same on every platform, so a printed seed replays.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }
}

/// Runs `python script arg`, feeds it `input` (one JSON case a line) and reads one JSON answer a
/// line; fails unless the process exits 0 after exactly `expected` answers. A writer thread feeds
/// the cases while this thread reads the answers, so neither pipe fills up and blocks the other.
pub fn json_lines_exchange(
    python: &std::path::Path,
    script: &std::path::Path,
    arg: &std::path::Path,
    input: &str,
    expected: usize,
) -> anyhow::Result<Vec<serde_json::Value>> {
    use anyhow::{Context as _, anyhow};
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::process::Stdio;
    let mut child = Command::new(python)
        .arg(script)
        .arg(arg)
        .env("PYTHONHASHSEED", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("running {}", script.display()))?;
    let mut stdin = child.stdin.take().ok_or_else(|| anyhow!("no stdin"))?;
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let stdout = child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?;
    let mut answers = Vec::with_capacity(expected);
    for line in BufReader::new(stdout).lines() {
        answers.push(serde_json::from_str(&line?)?);
    }
    writer
        .join()
        .map_err(|_| anyhow!("oracle writer panicked"))??;
    let status = child.wait()?;
    if !status.success() || answers.len() != expected {
        anyhow::bail!(
            "oracle exited {status} after {} of {expected} answers",
            answers.len()
        );
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn a_seed_replays_and_bounds_hold() {
        let (mut a, mut b) = (Rng::new(42), Rng::new(42));
        let xs: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs[0], xs[1]);
        let mut r = Rng::new(7);
        assert!((0..1000).all(|_| r.below(5) < 5));
        assert_eq!(r.below(0), 0);
        assert_eq!(r.pick::<u8>(&[]), None);
    }
}
