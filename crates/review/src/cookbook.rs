//! Check 3: the launched commands against the published cookbook commands.
//!
//! A cookbook file (`infx/cookbook/<config-key>.yaml` in the benchmark tree, format in
//! docs/review.md) describes each published deployment: the worker command, the router command,
//! the environment and the per-point values. Every matrix point of the config is rendered with
//! `infx-recipe`'s renderer (the command srtctl would launch) and compared flag by flag and
//! variable by variable; the InferenceX-only settings of [`INFERENCEX_ONLY`] are left out and
//! listed with their reason.

use crate::codes;
use infx_matrix::SweepRow;
use infx_recipe::{Process, Rendered, Variant};
use infx_report::{Diagnostic, Span};
use infx_yaml::{DocIndex, Document, Node, Value};
use std::path::{Path, PathBuf};

/// A rendered command differs from the cookbook (flag, value, variable, module, router).
pub const CODE_DIFF: infx_report::Code = codes::COOKBOOK_DIFF;
/// A matrix point has no cookbook point.
pub const CODE_POINT_MISSING: infx_report::Code = codes::COOKBOOK_POINT_MISSING;
/// A cookbook point has no matrix row.
pub const CODE_POINT_UNMATCHED: infx_report::Code = codes::COOKBOOK_POINT_UNMATCHED;
/// The cookbook file is malformed.
pub const CODE_FILE: infx_report::Code = codes::COOKBOOK_FILE;

/// The findings that depend on the published upstream document, not on the repository: a
/// difference from the published command, and a matrix point the cookbook does not publish
/// yet. A vendor adding a point cannot have its published command before the PR, and the
/// checklist wants the upstream recipe merged before *this PR merges*: validate judges these
/// at merge time (a warning locally, an error in CI on a pull request; docs/review.md,
/// "Check 3: the cookbook diff").
pub const PUBLISHED: &[infx_report::Code] = &[CODE_DIFF, CODE_POINT_MISSING];

/// Where cookbook files live, relative to the benchmark tree.
pub const COOKBOOK_DIR: &str = "infx/cookbook";

/// What an InferenceX-only setting matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// A worker or router flag (`--host`).
    Flag(&'static str),
    /// An environment variable.
    Env(&'static str),
    /// Every environment variable with this prefix.
    EnvPrefix(&'static str),
}

/// One setting left out of the comparison, with the reason a reviewer gave.
#[derive(Clone, Copy, Debug)]
pub struct Exclusion {
    pub item: Item,
    pub reason: &'static str,
}

const PLACEMENT: &str =
    "process placement (hosts, ports, GPUs and the local model mount are the launcher's)";
const METRICS: &str =
    "metrics export: Prometheus metrics scraped by AIPerf (AIPERF_REQUIRED_SERVER_METRIC_PREFIX)";
const PYTHON: &str = "Python path isolation and log buffering";
const CRASH: &str = "crash dumps only";
const SIMULATED: &str = "synthetic acceptance (disclosed as such; Check 11 decides it)";
const CLIENT: &str = "AIPerf client settings (the benchmark client is not part of the cookbook)";

/// The InferenceX-only settings (docs/review.md, "Check 3"): never compared, always shown.
pub const INFERENCEX_ONLY: &[Exclusion] = &[
    Exclusion {
        item: Item::Flag("--host"),
        reason: PLACEMENT,
    },
    Exclusion {
        item: Item::Flag("--port"),
        reason: PLACEMENT,
    },
    Exclusion {
        item: Item::Flag("--nccl-port"),
        reason: PLACEMENT,
    },
    Exclusion {
        item: Item::Flag("--model-path"),
        reason: PLACEMENT,
    },
    Exclusion {
        item: Item::Flag("--worker-urls"),
        reason: PLACEMENT,
    },
    Exclusion {
        item: Item::Env("CUDA_VISIBLE_DEVICES"),
        reason: PLACEMENT,
    },
    Exclusion {
        item: Item::Env("HEAD_NODE_IP"),
        reason: PLACEMENT,
    },
    Exclusion {
        item: Item::Flag("--enable-metrics"),
        reason: METRICS,
    },
    Exclusion {
        item: Item::Flag("--prometheus-port"),
        reason: METRICS,
    },
    Exclusion {
        item: Item::Flag("--prometheus-host"),
        reason: METRICS,
    },
    Exclusion {
        item: Item::Env("PYTHONNOUSERSITE"),
        reason: PYTHON,
    },
    Exclusion {
        item: Item::Env("PYTHONUNBUFFERED"),
        reason: PYTHON,
    },
    Exclusion {
        item: Item::Env("SGLANG_CUDA_COREDUMP_BEFORE_CRASH"),
        reason: CRASH,
    },
    Exclusion {
        item: Item::Env("SGLANG_PYSPY_DUMP_BEFORE_CRASH"),
        reason: CRASH,
    },
    Exclusion {
        item: Item::EnvPrefix("SGLANG_SIMULATE_ACC_"),
        reason: SIMULATED,
    },
    Exclusion {
        item: Item::Env("CONC"),
        reason: CLIENT,
    },
    Exclusion {
        item: Item::Env("AGENTIC_WARMUP_GRACE_PERIOD"),
        reason: CLIENT,
    },
    Exclusion {
        item: Item::EnvPrefix("AIPERF_"),
        reason: CLIENT,
    },
];

fn exclusion_of_flag(flag: &str) -> Option<&'static Exclusion> {
    INFERENCEX_ONLY
        .iter()
        .find(|e| matches!(e.item, Item::Flag(f) if f == flag))
}

fn exclusion_of_env(name: &str) -> Option<&'static Exclusion> {
    INFERENCEX_ONLY.iter().find(|e| match e.item {
        Item::Env(n) => n == name,
        Item::EnvPrefix(p) => name.starts_with(p),
        Item::Flag(_) => false,
    })
}

/// A command split into the program (the `-m` module when there is one) and its flags in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    pub program: String,
    pub flags: Vec<(String, Option<String>)>,
}

/// Splits a command line the way a POSIX shell splits words (single and double quotes,
/// backslash escapes); no expansion.
pub fn split_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => cur.extend(chars.next()),
                        _ => cur.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

impl Command {
    /// Reads argv: the interpreter is dropped when a `-m module` follows it (srtctl launches
    /// `python` or `python3`, the cookbook writes `python3`: the module is what runs); `--a=b`
    /// and `--a b` are the same flag; several values after one flag are one space-joined value.
    pub fn parse(argv: &[String]) -> Command {
        let first_flag = argv
            .iter()
            .position(|a| a.starts_with("--"))
            .unwrap_or(argv.len());
        let head = &argv[..first_flag];
        let program = match head.iter().position(|a| a == "-m") {
            Some(i) => head.get(i + 1).cloned().unwrap_or_default(),
            None => head.join(" "),
        };
        let mut flags: Vec<(String, Option<String>)> = Vec::new();
        for a in &argv[first_flag..] {
            if let Some(f) = a.strip_prefix("--") {
                match f.split_once('=') {
                    Some((k, v)) => flags.push((format!("--{k}"), Some(v.to_string()))),
                    None => flags.push((a.clone(), None)),
                }
            } else if let Some((_, v)) = flags.last_mut() {
                *v = Some(match v.take() {
                    Some(prev) => format!("{prev} {a}"),
                    None => a.clone(),
                });
            }
        }
        Command { program, flags }
    }

    pub fn get(&self, flag: &str) -> Option<&Option<String>> {
        self.flags
            .iter()
            .rev()
            .find(|(f, _)| f == flag)
            .map(|(_, v)| v)
    }

    /// Sets or appends a flag (a per-point value replaces the deployment's).
    fn set(&mut self, flag: &str, value: Option<String>) {
        match self.flags.iter_mut().find(|(f, _)| f == flag) {
            Some(slot) => slot.1 = value,
            None => self.flags.push((flag.to_string(), value)),
        }
    }

    fn int(&self, flag: &str) -> Option<i64> {
        self.get(flag)?.as_deref()?.parse().ok()
    }
}

/// One published point: its concurrency and the per-point flags.
#[derive(Clone, Debug)]
pub struct CookbookPoint {
    pub conc: i64,
    pub span: Span,
    /// Flags with their line in the cookbook file.
    pub args: Vec<(String, Option<String>, Span)>,
}

/// One published deployment ("Agg TP2").
#[derive(Clone, Debug)]
pub struct Deployment {
    pub name: String,
    pub span: Span,
    pub worker: Command,
    pub router: Option<Command>,
    pub environment: Vec<(String, String)>,
    pub points: Vec<CookbookPoint>,
}

/// A parsed cookbook file.
#[derive(Clone, Debug)]
pub struct Cookbook {
    /// Path as shown in findings.
    pub path: PathBuf,
    pub config_key: String,
    /// `source:` entries (page, engine commit, router version, …), in file order.
    pub source: Vec<(String, String)>,
    pub deployments: Vec<Deployment>,
}

impl Deployment {
    /// The worker command of one point: the deployment's flags with the point's values applied.
    pub fn worker_for(&self, p: &CookbookPoint) -> Command {
        let mut c = self.worker.clone();
        for (f, v, _) in &p.args {
            c.set(f, v.clone());
        }
        c
    }
}

/// The parallelism a worker command runs: (tensor, expert, DP attention).
fn shape(c: &Command) -> (i64, i64, bool) {
    (
        c.int("--tensor-parallel-size")
            .or_else(|| c.int("--tp-size"))
            .or_else(|| c.int("--tp"))
            .unwrap_or(1),
        c.int("--expert-parallel-size")
            .or_else(|| c.int("--ep-size"))
            .or_else(|| c.int("--ep"))
            .unwrap_or(1),
        c.get("--enable-dp-attention").is_some(),
    )
}

fn scalar_text(n: &Node) -> Option<String> {
    match &n.value {
        Value::Str(s) => Some(s.clone()),
        Value::Null | Value::Seq(_) | Value::Map(_) => None,
        _ => Some(infx_recipe::py_str(n)),
    }
}

/// Reads a cookbook document. Every problem is a `review/cookbook-file` finding.
pub fn parse(doc: &Document) -> Result<Cookbook, Vec<Diagnostic>> {
    let path = doc.path.clone();
    let mut errs = Vec::new();
    let bad = |span: Span, msg: String| {
        Diagnostic::error(CODE_FILE, msg)
            .at(&path, span)
            .with_help("see docs/review.md (Check 3) for the cookbook file format")
    };
    let root = &doc.root;
    let Some(map) = root.as_map() else {
        return Err(vec![bad(root.span, "a cookbook file is a mapping".into())]);
    };
    let config_key = match map.get("config-key").and_then(Node::as_str) {
        Some(k) => k.to_string(),
        None => {
            errs.push(bad(root.span, "missing `config-key`".into()));
            String::new()
        }
    };
    let mut source = Vec::new();
    match map.get("source").and_then(Node::as_map) {
        Some(s) => {
            for (k, _, v) in s.iter() {
                source.push((k.to_string(), scalar_text(v).unwrap_or_default()));
            }
        }
        None => errs.push(bad(
            root.span,
            "missing `source` (the page and upstream commit the commands were taken from)".into(),
        )),
    }
    let mut deployments = Vec::new();
    match map.get("deployments").and_then(Node::as_seq) {
        Some(list) if !list.is_empty() => {
            for d in list {
                match parse_deployment(d, &bad) {
                    Ok(dep) => deployments.push(dep),
                    Err(e) => errs.extend(e),
                }
            }
        }
        _ => errs.push(bad(root.span, "missing or empty `deployments` list".into())),
    }
    if errs.is_empty() {
        Ok(Cookbook {
            path,
            config_key,
            source,
            deployments,
        })
    } else {
        Err(errs)
    }
}

fn parse_deployment(
    d: &Node,
    bad: &dyn Fn(Span, String) -> Diagnostic,
) -> Result<Deployment, Vec<Diagnostic>> {
    let mut errs = Vec::new();
    let name = d
        .get("name")
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_string();
    if name.is_empty() {
        errs.push(bad(d.span, "a deployment needs a `name`".into()));
    }
    let command = |key: &str| {
        d.get(key)
            .and_then(Node::as_str)
            .map(|s| Command::parse(&split_words(s)))
    };
    let worker = command("worker");
    if worker.is_none() {
        errs.push(bad(
            d.span,
            format!("deployment `{name}` needs a `worker` command"),
        ));
    }
    let router = command("router");
    let mut environment = Vec::new();
    if let Some(env) = d.get("environment") {
        match env.as_map() {
            Some(m) => {
                for (k, _, v) in m.iter() {
                    environment.push((k.to_string(), scalar_text(v).unwrap_or_default()));
                }
            }
            None => errs.push(bad(env.span, "`environment` is a mapping".into())),
        }
    }
    let mut points = Vec::new();
    for p in d.get("points").and_then(Node::as_seq).unwrap_or_default() {
        let Some(conc) = p
            .get("conc")
            .and_then(|c| infx_recipe::coerce_int(c).ok())
            .and_then(|j| j.as_i64())
        else {
            errs.push(bad(p.span, "a point needs an integer `conc`".into()));
            continue;
        };
        let mut args = Vec::new();
        if let Some(m) = p.get("args").and_then(Node::as_map) {
            for (k, _, v) in m.iter() {
                let flag = format!("--{}", k.trim_start_matches('-'));
                let value = match &v.value {
                    Value::Bool(true) => None,
                    _ => scalar_text(v),
                };
                args.push((flag, value, v.span));
            }
        }
        points.push(CookbookPoint {
            conc,
            span: p.span,
            args,
        });
    }
    if points.is_empty() {
        errs.push(bad(
            d.span,
            format!("deployment `{name}` lists no `points`"),
        ));
    }
    match (errs.is_empty(), worker) {
        (true, Some(worker)) => Ok(Deployment {
            name,
            span: d.span,
            worker,
            router,
            environment,
            points,
        }),
        _ => Err(errs),
    }
}

/// One matrix point of a config, bound to its recipe variant (model bound as the launcher does).
#[derive(Clone, Debug)]
pub struct Point {
    pub tp: i64,
    pub ep: i64,
    pub dp_attn: bool,
    pub conc: i64,
    /// The variant's label (`override_tp2_c32`).
    pub label: String,
    pub variant: Variant,
    /// The search-space row the point came from.
    pub row_path: PathBuf,
    pub row_span: Span,
}

/// What one point's comparison found.
#[derive(Debug)]
pub struct PointReport {
    pub deployment: String,
    pub conc: i64,
    pub label: String,
    pub rendered: Rendered,
    /// InferenceX-only settings present on either side: (setting as written, reason).
    pub excluded: Vec<(String, &'static str)>,
    pub differences: Vec<Diagnostic>,
}

/// The comparison of one cookbook with the points of its config.
#[derive(Debug, Default)]
pub struct Report {
    pub points: Vec<PointReport>,
    /// Points without a counterpart on the other side.
    pub unmatched: Vec<Diagnostic>,
}

impl Report {
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = self
            .points
            .iter()
            .flat_map(|p| p.differences.iter().cloned())
            .collect();
        out.extend(self.unmatched.iter().cloned());
        out
    }
    pub fn difference_count(&self) -> usize {
        self.points
            .iter()
            .map(|p| p.differences.len())
            .sum::<usize>()
            + self.unmatched.len()
    }
}

/// Where a recipe value is: the file that set it and the node's span; else the nearest mapping
/// that exists (the role's `args`/`env`, the frontend, the variant's root).
fn recipe_site(v: &Variant, candidates: &[String]) -> (PathBuf, Span) {
    for c in candidates {
        let parts: Vec<&str> = c.split('.').collect();
        if let Some(n) = v.tree.get_path(&parts) {
            return (v.file_of(c).to_path_buf(), n.span);
        }
    }
    // Parents: the value is absent; point at the block that should set it.
    for c in candidates {
        let mut parts: Vec<&str> = c.split('.').collect();
        while parts.pop().is_some() && !parts.is_empty() {
            if let Some(n) = v.tree.get_path(&parts) {
                return (v.file_of(&parts.join(".")).to_path_buf(), n.span);
            }
        }
    }
    (v.file_of("").to_path_buf(), v.tree.span)
}

fn flag_keys(prefix: &str, flag: &str) -> Vec<String> {
    let bare = flag.trim_start_matches('-');
    let mut out = vec![format!("{prefix}.{bare}")];
    if bare.contains('-') {
        out.push(format!("{prefix}.{}", bare.replace('-', "_")));
    }
    out
}

fn same_value(a: &Option<String>, b: &Option<String>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => {
            x == y || matches!((x.parse::<f64>(), y.parse::<f64>()), (Ok(p), Ok(q)) if p == q)
        }
        _ => false,
    }
}

fn show(flag: &str, v: &Option<String>) -> String {
    match v {
        Some(v) => format!("{flag} {v}"),
        None => flag.to_string(),
    }
}

/// Compares two commands flag by flag. `site` locates a recipe flag; `what` names the process.
fn diff_flags(
    recipe: &Command,
    cookbook: &Command,
    what: &str,
    site: &dyn Fn(&str) -> (PathBuf, Span),
    at_cookbook: &str,
    excluded: &mut Vec<(String, &'static str)>,
    out: &mut Vec<Diagnostic>,
) {
    let diff = |flag: &str, msg: String| {
        let (file, span) = site(flag);
        Diagnostic::error(CODE_DIFF, msg)
            .at(file, span)
            .with_note(format!("cookbook: {at_cookbook}"))
    };
    if recipe.program != cookbook.program {
        out.push(
            diff(
                "",
                format!(
                    "{what}: launches `{}`, the cookbook `{}`",
                    recipe.program, cookbook.program
                ),
            )
            .with_help("launch the program the cookbook publishes"),
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    for (flag, want) in &cookbook.flags {
        if !seen.insert(flag.clone()) {
            continue;
        }
        let want = cookbook.get(flag).unwrap_or(want);
        if let Some(e) = exclusion_of_flag(flag) {
            excluded.push((format!("{what} {}", show(flag, want)), e.reason));
            continue;
        }
        match recipe.get(flag) {
            None => out.push(
                diff(
                    flag,
                    format!(
                        "{what}: the cookbook sets `{}`, the recipe does not",
                        show(flag, want)
                    ),
                )
                .with_help(format!(
                    "add `{}` to the recipe, or update the cookbook file if upstream changed",
                    show(flag, want)
                )),
            ),
            Some(have) if !same_value(have, want) => out.push(
                diff(
                    flag,
                    format!(
                        "{what}: `{}` in the recipe, `{}` in the cookbook",
                        show(flag, have),
                        show(flag, want)
                    ),
                )
                .with_help(format!(
                    "use the cookbook's `{}`, or explain the deviation and update the cookbook file",
                    show(flag, want)
                )),
            ),
            Some(_) => {}
        }
    }
    for (flag, have) in &recipe.flags {
        if cookbook.get(flag).is_some() || !seen.insert(flag.clone()) {
            continue;
        }
        if let Some(e) = exclusion_of_flag(flag) {
            excluded.push((format!("{what} {}", show(flag, have)), e.reason));
            continue;
        }
        out.push(
            diff(
                flag,
                format!(
                    "{what}: the recipe sets `{}`, the cookbook does not",
                    show(flag, have)
                ),
            )
            .with_help("drop the setting, or add it to the cookbook file with its upstream source"),
        );
    }
}

fn diff_env(
    have: &[(String, String)],
    want: &[(String, String)],
    site: &dyn Fn(&str) -> (PathBuf, Span),
    at_cookbook: &str,
    excluded: &mut Vec<(String, &'static str)>,
    out: &mut Vec<Diagnostic>,
) {
    let get = |list: &[(String, String)], k: &str| {
        list.iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    let diff = |k: &str, msg: String| {
        let (file, span) = site(k);
        Diagnostic::error(CODE_DIFF, msg)
            .at(file, span)
            .with_note(format!("cookbook: {at_cookbook}"))
    };
    let mut seen = std::collections::BTreeSet::new();
    for (k, v) in want.iter().chain(have) {
        if !seen.insert(k.clone()) {
            continue;
        }
        if let Some(e) = exclusion_of_env(k) {
            excluded.push((format!("worker env {k}={v}"), e.reason));
            continue;
        }
        match (get(have, k), get(want, k)) {
            (None, Some(w)) => out.push(
                diff(
                    k,
                    format!("worker environment: the cookbook sets `{k}={w}`, the recipe does not"),
                )
                .with_help(format!("add `{k}: \"{w}\"` to the worker's env")),
            ),
            (Some(h), None) => out.push(
                diff(
                    k,
                    format!("worker environment: the recipe sets `{k}={h}`, the cookbook does not"),
                )
                .with_help(
                    "drop the variable, or add it to the cookbook file with its upstream source",
                ),
            ),
            (Some(h), Some(w)) if !same_value(&Some(h.clone()), &Some(w.clone())) => out.push(
                diff(
                    k,
                    format!(
                        "worker environment: `{k}={h}` in the recipe, `{k}={w}` in the cookbook"
                    ),
                )
                .with_help(format!("use the cookbook's `{k}={w}`")),
            ),
            _ => {}
        }
    }
}

fn line_of(path: &Path, span: Span) -> String {
    format!("{}:{}", path.display(), span.start.line())
}

fn role_process(r: &Rendered) -> Option<&Process> {
    r.processes.iter().find(|p| p.kind == "worker")
}

/// Compares every point of a config with the cookbook (pure).
pub fn compare(cookbook: &Cookbook, points: &[Point]) -> Report {
    let mut report = Report::default();
    let mut used = vec![false; points.len()];
    for dep in &cookbook.deployments {
        for cp in &dep.points {
            let worker = dep.worker_for(cp);
            let (tp, ep, dp) = shape(&worker);
            let found = points.iter().enumerate().find(|(i, p)| {
                !used[*i] && p.tp == tp && p.ep == ep && p.dp_attn == dp && p.conc == cp.conc
            });
            let at_cookbook = line_of(&cookbook.path, cp.span);
            let Some((i, point)) = found else {
                report.unmatched.push(
                    Diagnostic::error(
                        CODE_POINT_UNMATCHED,
                        format!(
                            "cookbook point {} C{} (tp {tp}, ep {ep}, dp-attn {dp}) has no matrix row in {}",
                            dep.name, cp.conc, cookbook.config_key
                        ),
                    )
                    .at(&cookbook.path, cp.span)
                    .with_help("add the point to the config's search space, or drop it from the cookbook file"),
                );
                continue;
            };
            used[i] = true;
            report
                .points
                .push(compare_point(dep, cp, &worker, point, &at_cookbook));
        }
    }
    for (p, _) in points.iter().zip(&used).filter(|(_, u)| !**u) {
        report.unmatched.push(
            Diagnostic::error(
                CODE_POINT_MISSING,
                format!(
                    "matrix point tp {}, ep {}, dp-attn {}, conc {} ({}) is not in the cookbook file {}",
                    p.tp, p.ep, p.dp_attn, p.conc, p.label, cookbook.path.display()
                ),
            )
            .at(&p.row_path, p.row_span)
            .with_help("once the upstream recipe for this point is published (before this PR merges), add its command to the cookbook file; or drop the point"),
        );
    }
    report
}

fn compare_point(
    dep: &Deployment,
    cp: &CookbookPoint,
    worker: &Command,
    point: &Point,
    at_cookbook: &str,
) -> PointReport {
    let v = &point.variant;
    let rendered = infx_recipe::render(v);
    let mut excluded = Vec::new();
    let mut differences = Vec::new();
    match role_process(&rendered) {
        Some(w) => {
            let role = w.role.clone();
            let recipe_cmd = Command::parse(&w.argv);
            let site = |flag: &str| {
                if flag.is_empty() {
                    return recipe_site(v, &[format!("roles.{role}")]);
                }
                // A per-point value lives in the override, so look there first.
                let mut keys = flag_keys(&format!("roles.{role}.args"), flag);
                keys.extend(flag_keys(&format!("roles.{role}.config"), flag));
                recipe_site(v, &keys)
            };
            diff_flags(
                &recipe_cmd,
                worker,
                "worker",
                &site,
                at_cookbook,
                &mut excluded,
                &mut differences,
            );
            let env_site = |k: &str| {
                recipe_site(
                    v,
                    &[format!("roles.{role}.env.{k}"), format!("environment.{k}")],
                )
            };
            diff_env(
                &w.env,
                &dep.environment,
                &env_site,
                at_cookbook,
                &mut excluded,
                &mut differences,
            );
        }
        None => differences.push(
            Diagnostic::error(CODE_DIFF, "the recipe renders no worker process")
                .at(v.file_of(""), v.tree.span),
        ),
    }
    let router = rendered.processes.iter().find(|p| p.kind == "router");
    let fe_site = |flag: &str| recipe_site(v, &flag_keys("frontend.args", flag));
    match (router, &dep.router) {
        (Some(r), Some(want)) => diff_flags(
            &Command::parse(&r.argv),
            want,
            "router",
            &fe_site,
            at_cookbook,
            &mut excluded,
            &mut differences,
        ),
        (None, Some(_)) => {
            let (file, span) = recipe_site(v, &["frontend.type".to_string()]);
            differences.push(
                Diagnostic::error(
                    CODE_DIFF,
                    format!(
                        "the cookbook runs {} behind a router, the recipe launches none",
                        dep.name
                    ),
                )
                .at(file, span)
                .with_note(format!("cookbook: {at_cookbook}")),
            );
        }
        (Some(r), None) => {
            let (file, span) = recipe_site(v, &["frontend.type".to_string()]);
            differences.push(
                Diagnostic::error(
                    CODE_DIFF,
                    format!(
                        "the recipe launches a router ({}), the cookbook's {} has none",
                        r.role, dep.name
                    ),
                )
                .at(file, span)
                .with_note(format!("cookbook: {at_cookbook}")),
            );
        }
        (None, None) => {}
    }
    if rendered.processes.iter().any(|p| p.kind == "benchmark") {
        excluded.push(("benchmark client process".into(), CLIENT));
    }
    excluded.sort();
    excluded.dedup();
    PointReport {
        deployment: dep.name.clone(),
        conc: cp.conc,
        label: point.label.clone(),
        rendered,
        excluded,
        differences,
    }
}

/// Check 3 as one pure function: every difference, missing and unmatched point.
pub fn check(cookbook: &Cookbook, points: &[Point]) -> Vec<Diagnostic> {
    compare(cookbook, points).diagnostics()
}

/// The cookbook file of a config key in a tree, when there is one.
pub fn cookbook_path(tree: &Path, config_key: &str) -> PathBuf {
    tree.join(COOKBOOK_DIR).join(format!("{config_key}.yaml"))
}

/// Reads the cookbook of `config_key` (`None` when the tree has none). Findings name the file
/// relative to the tree.
pub fn load_cookbook(tree: &Path, config_key: &str) -> Option<Result<Cookbook, Vec<Diagnostic>>> {
    load_cookbook_in(tree, config_key, &DocIndex::default())
}

/// [`load_cookbook`], reading the file from `parsed` when this run already parsed it.
pub fn load_cookbook_in(
    tree: &Path,
    config_key: &str,
    parsed: &DocIndex<'_>,
) -> Option<Result<Cookbook, Vec<Diagnostic>>> {
    // Config keys come from the tree under review (hostile in CI, docs/security.md): a key that
    // is not a plain file name, or a file that resolves outside the tree (symlink), is never read.
    let plain = !config_key.is_empty()
        && !config_key.starts_with('.')
        && config_key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if !plain {
        return None;
    }
    let abs = cookbook_path(tree, config_key);
    if !abs.is_file() {
        return None;
    }
    let inside = match (infx_fs::canonical(&abs), infx_fs::canonical(tree)) {
        (Ok(file), Ok(root)) => file.starts_with(root),
        _ => false,
    };
    if !inside {
        let rel = PathBuf::from(COOKBOOK_DIR).join(format!("{config_key}.yaml"));
        return Some(Err(vec![
            Diagnostic::error(
                CODE_FILE,
                "the cookbook file resolves outside the tree; not read",
            )
            .with_path(&rel)
            .with_help("commit the cookbook file itself, not a symlink out of the repository"),
        ]));
    }
    let rel = PathBuf::from(COOKBOOK_DIR).join(format!("{config_key}.yaml"));
    let doc = match crate::load::load_doc_in(&abs, &rel, parsed) {
        Ok(d) => d,
        Err(d) => return Some(Err(vec![d])),
    };
    Some(parse(&doc).and_then(|c| {
        if c.config_key == config_key {
            Ok(c)
        } else {
            Err(vec![
                Diagnostic::error(
                    CODE_FILE,
                    format!(
                        "the file is named for `{config_key}` but describes `{}`",
                        c.config_key
                    ),
                )
                .with_path(&rel)
                .with_help("name the file <config-key>.yaml"),
            ])
        }
    }))
}

/// Every throughput point of `config_key`, bound to its recipe variant by infx-matrix's binder
/// and composed and model-bound by infx-recipe (the launcher's view). Binding failures are
/// the matrix check's findings; they are returned so a caller running alone can show them.
pub fn load_points(
    tree: &Path,
    masters: &[Document],
    runners: &Node,
    parsed: &DocIndex<'_>,
    config_key: &str,
) -> (Vec<Point>, Vec<Diagnostic>) {
    let configs = match infx_matrix::MasterConfigs::from_documents(masters) {
        Ok(c) => c,
        Err(d) => return (Vec::new(), vec![d]),
    };
    let mut run = infx_matrix::Runners::from_node(runners);
    run.tree_root = Some(tree.to_path_buf());
    let opts = infx_matrix::Options {
        selection: infx_matrix::Selection::TestConfig(infx_matrix::TestConfig {
            config_keys: vec![config_key.to_string()],
            ..Default::default()
        }),
        evals: infx_matrix::EvalMode::None,
        runner_node_filter: None,
        scenario_types: None,
    };
    let rows = match infx_matrix::expand_with_origins(&configs, &run, &opts) {
        Ok(r) => r,
        Err(d) => return (Vec::new(), vec![d]),
    };
    let recipes = infx_matrix::load_recipes_in(rows.iter().map(|(r, _)| r), tree, parsed);
    let bound = infx_matrix::bind(&rows, &recipes);
    let mut points = Vec::new();
    let mut diags = bound.diagnostics;
    // Each (recipe reference, lane) is composed and expanded once, not once per point.
    let mut expanded: std::collections::HashMap<(String, bool), Result<Vec<Variant>, Diagnostic>> =
        std::collections::HashMap::new();
    for (index, label) in bound.bindings {
        let Some((row, origin)) = rows.get(index) else {
            continue;
        };
        let reference = row.srt_recipe().unwrap_or_default().to_string();
        let agentic = row.is_agentic();
        let variants = expanded
            .entry((reference.clone(), agentic))
            .or_insert_with(|| expand_reference(&recipes, row, &reference));
        let found = match variants {
            Ok(vs) => vs
                .iter()
                .find(|v| {
                    v.label == label || (v.label.is_empty() && v.name.as_deref() == Some(&label))
                })
                .cloned()
                .ok_or_else(|| {
                    Diagnostic::error(CODE_DIFF, format!("{reference}: variant {label} not found"))
                }),
            Err(d) => Err(d.clone()),
        };
        match found {
            Ok(mut variant) => {
                let field = |k: &str| row.get_str(k).unwrap_or_default().to_string();
                infx_recipe::bind_model(
                    &mut variant,
                    &field("model"),
                    &field("image"),
                    &field("precision"),
                );
                let int = |k: &str| row.get(k).and_then(infx_matrix::Json::as_i64);
                points.push(Point {
                    tp: int("tp").unwrap_or(1),
                    ep: int("ep").unwrap_or(1),
                    dp_attn: row.get("dp-attn").is_some_and(infx_matrix::Json::truthy),
                    conc: int("conc").unwrap_or(0),
                    label,
                    variant,
                    row_path: origin.path.clone(),
                    row_span: origin.span,
                });
            }
            Err(d) => diags.push(d),
        }
    }
    (points, diags)
}

/// The variants of a row's recipe reference, composed with its lane block.
/// The files come from the binder's `recipes` (each loaded once per run).
fn expand_reference(
    recipes: &infx_matrix::RecipeSet,
    row: &infx_matrix::Object,
    reference: &str,
) -> Result<Vec<Variant>, Diagnostic> {
    let r = infx_recipe::RecipeRef::parse_inferencex(reference)?;
    let path = infx_matrix::recipe_path(&r.path);
    let not_loaded = |what: &str| Diagnostic::error(CODE_DIFF, format!("{what} was not loaded"));
    let file = recipes
        .file(&path)
        .ok_or_else(|| not_loaded(&path))?
        .as_ref()
        .map_err(Diagnostic::clone)?;
    let lane = row.lane();
    let block = recipes
        .lane(lane)
        .ok_or_else(|| not_loaded(lane.block_path()))?
        .as_ref()
        .map_err(Diagnostic::clone)?;
    infx_recipe::compose_lane(file, lane, block).expand_with(
        r.selector.as_ref(),
        infx_recipe::ExpandOptions::inferencex(),
    )
}

/// `validate`'s Check 3: every config in `keys` (all when `None`) that has a cookbook file.
/// A config whose points do not all bind is left to the matrix check, which reports that.
pub fn check_configs(
    tree: &Path,
    masters: &[Document],
    runners: Option<&Document>,
    parsed: &DocIndex<'_>,
    keys: Option<&[String]>,
) -> Vec<Diagnostic> {
    let Some(runners) = runners else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let all: Vec<String> = masters
        .iter()
        .filter_map(|m| m.root.as_map())
        .flat_map(|m| m.keys().map(str::to_string))
        .collect();
    for key in keys.map(<[String]>::to_vec).unwrap_or(all) {
        match load_cookbook_in(tree, &key, parsed) {
            None => {}
            Some(Err(d)) => out.extend(d),
            Some(Ok(cb)) => {
                let (points, bind_errors) = load_points(tree, masters, &runners.root, parsed, &key);
                // Points that do not bind are the matrix check's errors (validate fails on
                // them); comparing the rest would only repeat them as unmatched points.
                if bind_errors.iter().any(Diagnostic::is_error) {
                    continue;
                }
                out.extend(check(&cb, &points));
            }
        }
    }
    out
}
