//! Event-driven construction of the tree from saphyr-parser's span-carrying events.

use crate::chars;
use crate::codes;
use crate::resolve::{self, Resolved};
use crate::value::{Float, Mapping, Node, ScalarStyle, Value};
use crate::{Document, Pos, Span};
use infx_report::{Diagnostic, LineIndex};
use saphyr_parser::{Event, Marker, Parser, ScalarStyle as PStyle, Tag};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod fast;

/// Nodes that alias expansion and the copies kept for anchors may create in one document before
/// loading fails. Real recipes copy a few hundred; a billion-laughs file needs billions.
pub const DEFAULT_ALIAS_BUDGET: usize = 200_000;

/// Lists and mappings nested inside each other (aliases counted as expanded) beyond which
/// loading fails with `yaml/too-deep`. Real configs and recipes nest fewer than 20 levels;
/// PyYAML's recursive composer gives up near 330, and the parser's own limit for flow
/// collections (`[`/`{`) is this same 255. The bound also caps every recursive walk of a
/// loaded tree (checks, `Drop`, `Clone`), so no input can exhaust the stack
/// (docs/security.md).
pub const MAX_NESTING_DEPTH: usize = 255;

/// saphyr-parser's error for flow collections nested past its 255-level counter.
const PARSER_FLOW_LIMIT: &str = "recursion limit exceeded";

#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub alias_budget: usize,
    /// Deepest nesting of lists and mappings accepted (see [`MAX_NESTING_DEPTH`]).
    pub max_depth: usize,
    /// What a key written twice in one mapping does (PyYAML keeps the last silently).
    pub duplicate_keys: DuplicateKeys,
}

/// What the loader does with a key written twice in one mapping (README, the yaml step).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DuplicateKeys {
    /// The load fails with a `yaml/duplicate-key` error naming the first duplicate in source
    /// order (not the first whose mapping closes: inner mappings close first).
    #[default]
    Reject,
    /// The last value wins at the first position, silently, as in PyYAML's `safe_load`.
    KeepLast,
    /// The last value wins, and every duplicate is a `yaml/duplicate-key` error in
    /// [`Loaded::findings`] ([`load_file_as_pyyaml`]). [`parse_str_with`] has one error to
    /// give, so there `Record` fails as `Reject` does rather than lose them silently.
    Record,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            alias_budget: DEFAULT_ALIAS_BUDGET,
            max_depth: MAX_NESTING_DEPTH,
            duplicate_keys: DuplicateKeys::Reject,
        }
    }
}

/// Reads (through infx-fs: confined, regular files only, size-limited; docs/security.md) and
/// parses a file. Errors: unreadable file (`yaml/io`), refused file (`fs/…`), not UTF-8
/// (`yaml/encoding`), and every parse error of [`parse_str`].
pub fn load_file(path: &Path) -> Result<Document, Diagnostic> {
    let text = read_text(path)?;
    let root = parse_str(path, &text)?;
    Ok(Document {
        path: path.to_path_buf(),
        text: Arc::from(text),
        root: root.into(),
    })
}

/// A file read as PyYAML reads it, with what it silently loses reported: see
/// [`load_file_as_pyyaml`].
#[derive(Debug)]
pub struct Loaded {
    /// The document PyYAML's `safe_load` returns (a key written twice: the last value wins at
    /// the first position); `None` when the file cannot be read or does not parse.
    pub document: Option<Document>,
    /// Every `yaml/duplicate-key` error in source order, then the error that stopped the load.
    pub findings: Vec<Diagnostic>,
    /// The text as read and decoded (what every finding's position counts in), whether or not
    /// it parses, so a failed file's findings still show their source line without a second
    /// read; `None` when the file cannot be read or decoded.
    pub text: Option<Arc<str>>,
}

/// Parses made once and handed to a second reader: the base revision's run takes the head's
/// parse of every file whose blob is the same, by the path it would read it at, instead of
/// reading and parsing it again; of a file that changed, the head's parse of the sections
/// whose text is the same (docs/baseline.md, "Cost").
#[derive(Default)]
pub struct Reuse {
    offers: std::sync::Mutex<std::collections::HashMap<PathBuf, Offer>>,
}

/// What [`Reuse`] holds for one path.
enum Offer {
    /// The file's parse, as it is.
    Same(Loaded),
    /// A parse of another revision of the file, for its unchanged sections.
    Previous(Document),
}

impl std::fmt::Debug for Reuse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reuse({} files)", self.offers().len())
    }
}

impl Reuse {
    fn offers(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<PathBuf, Offer>> {
        self.offers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Offers `loaded` as the parse of the file at `path` (the same bytes): its document and
    /// findings are moved to that path.
    pub fn offer(&self, path: &Path, mut loaded: Loaded) {
        if let Some(doc) = &mut loaded.document {
            doc.path = path.to_path_buf();
        }
        for d in &mut loaded.findings {
            d.path = Some(path.to_path_buf());
        }
        self.offers()
            .insert(path.to_path_buf(), Offer::Same(loaded));
    }

    /// [`Self::offer`] of a parse made ahead of time for the file at `path` (by
    /// [`load_bytes_with_previous`], from bytes known to be the file's): counted as a parse of
    /// that file, which the reader then need not make.
    pub fn offer_parsed(&self, path: &Path, loaded: Loaded) {
        crate::parse_count::record(path);
        self.offer(path, loaded);
    }

    /// Offers `previous`, a parse of another revision of the file at `path`, for the
    /// top-level sections the two share.
    pub fn offer_previous(&self, path: &Path, previous: Document) {
        self.offers()
            .insert(path.to_path_buf(), Offer::Previous(previous));
    }

    /// Whether the whole parse of `path` is on offer (a reader sizing its work skips those).
    pub fn has(&self, path: &Path) -> bool {
        matches!(self.offers().get(path), Some(Offer::Same(_)))
    }

    /// Whether anything is on offer for `path`: its parse, or another revision's.
    pub fn has_any(&self, path: &Path) -> bool {
        self.offers().contains_key(path)
    }

    fn take(&self, path: &Path) -> Option<Offer> {
        self.offers().remove(path)
    }
}

impl Loaded {
    /// A file that could not be read: `d` says why.
    fn unread(d: Diagnostic) -> Loaded {
        Loaded {
            document: None,
            findings: vec![d],
            text: None,
        }
    }
}

/// [`load_file_as_pyyaml`]'s options: PyYAML's tree, every duplicate key recorded.
fn recording() -> LoadOptions {
    LoadOptions {
        duplicate_keys: DuplicateKeys::Record,
        ..LoadOptions::default()
    }
}

/// [`load_file_as_pyyaml`], or the parse `reuse` offers for `path`.
pub fn load_file_reusing(path: &Path, reuse: Option<&Reuse>) -> Loaded {
    match reuse.and_then(|r| r.take(path)) {
        Some(Offer::Same(loaded)) => loaded,
        Some(Offer::Previous(previous)) => load_with_previous(path, previous),
        None => load_file_as_pyyaml(path),
    }
}

/// [`load_file_as_pyyaml`], taking the unchanged top-level sections from `previous`
/// (crate::sections); the whole file is parsed when they cannot be shown the same.
fn load_with_previous(path: &Path, previous: Document) -> Loaded {
    let text = match read_text(path) {
        Ok(t) => t,
        Err(d) => return Loaded::unread(d),
    };
    crate::parse_count::record(path);
    with_previous(path, text, previous)
}

/// What [`load_file_reusing`] makes of a file offered `previous` ([`Reuse::offer_previous`]),
/// from the file's bytes instead of a read: a caller that holds them can parse ahead of the
/// reader and offer the result ([`Reuse::offer_parsed`], which counts it). Not counted here.
pub fn load_bytes_with_previous(path: &Path, bytes: Vec<u8>, previous: Document) -> Loaded {
    match decode(path, bytes) {
        Ok(text) => with_previous(path, text, previous),
        Err(d) => Loaded::unread(d),
    }
}

/// [`load_with_previous`] of a text already read and decoded.
fn with_previous(path: &Path, text: String, previous: Document) -> Loaded {
    let opts = recording();
    match crate::sections::reparse_sections_owned(path, &text, previous, &opts) {
        Some(root) => {
            let text: Arc<str> = Arc::from(text);
            Loaded {
                document: Some(Document {
                    path: path.to_path_buf(),
                    text: text.clone(),
                    root: root.into(),
                }),
                findings: Vec::new(),
                text: Some(text),
            }
        }
        None => built(path, text, &opts),
    }
}

/// A file read and cut into pieces of whole top-level sections, for parsing one large file on
/// several threads (docs/performance.md, "One file on two cores"): [`Cut::parse`] each piece
/// on any thread, then [`Cut::join`] gives the [`Loaded`] of [`load_file_as_pyyaml`].
#[derive(Debug)]
pub struct Cut {
    path: PathBuf,
    text: String,
    pieces: Vec<crate::sections::Piece>,
}

/// A file [`cut_file`] did not cut, as read: [`Uncut::load`] parses it whole.
#[derive(Debug)]
pub struct Uncut {
    path: PathBuf,
    text: Result<String, Diagnostic>,
}

/// `path` read and cut into at most `n` pieces ([`crate::sections::cut`]: not when it is not
/// plainly a block mapping of sections), or handed back uncut. Whether each piece stands for
/// its part of the whole parse is known only once it is parsed ([`Cut::join`]).
pub fn cut_file(path: &Path, n: usize) -> Result<Cut, Uncut> {
    let text = match read_text(path) {
        Ok(text) => text,
        Err(d) => {
            return Err(Uncut {
                path: path.to_path_buf(),
                text: Err(d),
            });
        }
    };
    match crate::sections::cut(&text, n) {
        Some(pieces) => Ok(Cut {
            path: path.to_path_buf(),
            text,
            pieces,
        }),
        None => Err(Uncut {
            path: path.to_path_buf(),
            text: Ok(text),
        }),
    }
}

impl Uncut {
    /// [`load_file_as_pyyaml`] of the text read.
    pub fn load(self) -> Loaded {
        match self.text {
            Ok(text) => loaded_from_text(&self.path, text),
            Err(d) => Loaded::unread(d),
        }
    }
}

impl Cut {
    /// How many pieces there are.
    pub fn pieces(&self) -> usize {
        self.pieces.len()
    }

    /// The parse of piece `i` (of [`Self::pieces`]); `None` when it cannot stand for that part
    /// of the whole parse.
    pub fn parse(&self, i: usize) -> Option<crate::sections::PieceParse> {
        crate::sections::parse_piece(&self.path, &self.text, self.pieces.get(i)?, &recording())
    }

    /// The file's [`Loaded`] from the parses of every piece in order (one parse counted): the
    /// whole parse's tree, or the whole parse itself when a piece's is missing or a key
    /// stands in two pieces.
    pub fn join(self, parts: Vec<Option<crate::sections::PieceParse>>) -> Loaded {
        crate::parse_count::record(&self.path);
        let root = if parts.len() == self.pieces.len() {
            parts
                .into_iter()
                .collect::<Option<Vec<_>>>()
                .and_then(crate::sections::join_pieces)
        } else {
            None
        };
        match root {
            Some(root) => loaded(&self.path, self.text, Ok(root), Vec::new()),
            None => built(&self.path, self.text, &recording()),
        }
    }
}

/// Like [`load_file`], but a key written twice does not stop the load: each one is a
/// `yaml/duplicate-key` error and the document is kept as PyYAML reads it, so the checks that
/// read the file still see what upstream's tools would run (README, the yaml step).
pub fn load_file_as_pyyaml(path: &Path) -> Loaded {
    let text = match read_text(path) {
        Ok(t) => t,
        Err(d) => return Loaded::unread(d),
    };
    loaded_from_text(path, text)
}

/// The load of a file whose text is read (see [`load_file_as_pyyaml`]).
fn loaded_from_text(path: &Path, text: String) -> Loaded {
    crate::parse_count::record(path);
    let opts = recording();
    built(path, text, &opts)
}

/// The whole parse of `text` as [`Loaded`] (counted by the caller).
fn built(path: &Path, text: String, opts: &LoadOptions) -> Loaded {
    let (parsed, findings) = build(path, &text, opts);
    loaded(path, text, parsed, findings)
}

/// The [`Loaded`] of a parse of `text`: its document, or its error last among the findings.
fn loaded(
    path: &Path,
    text: String,
    parsed: Result<Node, Diagnostic>,
    mut findings: Vec<Diagnostic>,
) -> Loaded {
    let text: Arc<str> = Arc::from(text);
    let document = match parsed {
        Ok(root) => Some(Document {
            path: path.to_path_buf(),
            text: text.clone(),
            root: root.into(),
        }),
        Err(d) => {
            findings.push(d);
            None
        }
    };
    Loaded {
        document,
        findings,
        text: Some(text),
    }
}

/// A file's text, read through infx-fs and decoded: the refusal or read error (`yaml/io` for
/// a read error) or the encoding error as this crate's finding.
fn read_text(path: &Path) -> Result<String, Diagnostic> {
    let bytes = infx_fs::read(path).map_err(|e| {
        let mut d = e.to_diagnostic();
        if e.kind == infx_fs::FsErrorKind::Unreadable {
            d.code = codes::IO;
        }
        d
    })?;
    decode(path, bytes)
}

fn decode(path: &Path, bytes: Vec<u8>) -> Result<String, Diagnostic> {
    match String::from_utf8(bytes) {
        Ok(mut s) => {
            if s.starts_with('\u{feff}') {
                // A UTF-8 byte order mark; PyYAML skips it. Keep offsets simple by replacing it
                // with nothing only at the very start.
                s.drain(..3);
            }
            Ok(s)
        }
        Err(e) => {
            let bytes = e.as_bytes();
            let good = e.utf8_error().valid_up_to();
            let prefix = String::from_utf8_lossy(&bytes[..good]);
            let idx = LineIndex::new(&prefix);
            let pos = idx.pos(&prefix, prefix.len());
            Err(Diagnostic::error(
                codes::ENCODING,
                format!("file is not valid UTF-8 (byte 0x{:02x})", bytes[good]),
            )
            .at(path, Span::point(pos))
            .with_help("save the file as UTF-8"))
        }
    }
}

/// Parses one YAML document from text with the default options.
pub fn parse_str(path: &Path, text: &str) -> Result<Node, Diagnostic> {
    parse_str_with(path, text, &LoadOptions::default())
}

pub fn parse_str_with(path: &Path, text: &str, opts: &LoadOptions) -> Result<Node, Diagnostic> {
    crate::parse_count::record(path);
    let (parsed, duplicates) = build(path, text, opts);
    // A duplicate met before the load ended is the error (it would have stopped the load
    // there), and of those the earliest in source order.
    match duplicates.into_iter().next() {
        Some(first) => Err(first),
        None => parsed,
    }
}

/// Runs the builder: the root or the error that stopped it, and the duplicate keys it met
/// (under [`DuplicateKeys::Reject`] and [`DuplicateKeys::Record`]) in source order.
pub(crate) fn build(
    path: &Path,
    text: &str,
    opts: &LoadOptions,
) -> (Result<Node, Diagnostic>, Vec<Diagnostic>) {
    let (parsed, duplicates, _) = run_builder(path, text, opts);
    (parsed, duplicates)
}

/// [`build`] of a text that stands alone: its root when it parses without a finding and
/// without an anchor or alias, whose copies count against a budget that is a whole file's
/// (`crate::sections::parse_piece`).
pub(crate) fn build_standalone(path: &Path, text: &str, opts: &LoadOptions) -> Option<Node> {
    match run_builder(path, text, opts) {
        (Ok(root), duplicates, 0) if duplicates.is_empty() => Some(root),
        _ => None,
    }
}

/// [`build`], with the nodes anchors and aliases copied (0: the text has neither).
fn run_builder(
    path: &Path,
    text: &str,
    opts: &LoadOptions,
) -> (Result<Node, Diagnostic>, Vec<Diagnostic>, usize) {
    run_builder_with(path, text, opts, true)
}

/// [`run_builder`], with the fast path on or off.
fn run_builder_with(
    path: &Path,
    text: &str,
    opts: &LoadOptions,
    fast: bool,
) -> (Result<Node, Diagnostic>, Vec<Diagnostic>, usize) {
    let mut b = Builder::new(path, text, opts);
    b.fast = fast;
    let parsed = b.run().map_err(|e| *e);
    let mut duplicates = b.duplicates.take().unwrap_or_default();
    // Recorded as mappings close, inner ones first: into source order.
    duplicates.sort_by_key(source_order);
    (parsed, duplicates, b.alias_nodes)
}

/// The parser's reading: the root or the error that stopped it, and the duplicate keys.
#[doc(hidden)]
pub type Built = (Result<Node, Diagnostic>, Vec<Diagnostic>);
/// The fast path's reading of a text it read alone: the root and the duplicate keys.
#[doc(hidden)]
pub type FastBuilt = (Node, Vec<Diagnostic>);

/// [`build`] two ways, for the tests and examples that hold the fast path to the parser
/// (docs/yaml.md, "The fast path"): the parser's reading, and the fast path's when it reads
/// the whole text alone (`None` when it gives up).
#[doc(hidden)]
pub fn build_both_ways(path: &Path, text: &str, opts: &LoadOptions) -> (Built, Option<FastBuilt>) {
    let (parsed, duplicates, _) = run_builder_with(path, text, opts, false);
    let survey = chars::survey(text);
    if survey.refused.is_some() || !survey.fast_readable() {
        return ((parsed, duplicates), None);
    }
    let mut b = Builder::new(path, text, opts);
    let fast = match fast::read(&mut b) {
        Ok(root) => {
            let mut dups = b.duplicates.take().unwrap_or_default();
            dups.sort_by_key(source_order);
            Some((root, dups))
        }
        Err(fast::Bail) => None,
    };
    ((parsed, duplicates), fast)
}

/// Where a finding sits, for sorting findings into source order.
fn source_order(d: &Diagnostic) -> Option<(usize, usize)> {
    d.span.map(|s| (s.start.line(), s.start.col()))
}

/// Character index → byte offset for a text, stored sparsely: one entry per multi-byte
/// character, so a master config with ten non-ASCII characters in 320 KB costs ten entries, not
/// a 2.6 MB table (that table was 4 % of the one-config change's CPU; docs/performance.md).
struct CharOffsets {
    /// For each multi-byte character in text order: its character index, and the extra bytes
    /// (UTF-8 length − 1) of it and every multi-byte character before it.
    wide: Vec<(usize, usize)>,
    /// Characters in the text (the index one past the last is valid too).
    chars: usize,
}

impl CharOffsets {
    fn new(text: &str) -> Self {
        let mut wide = Vec::new();
        if !text.is_ascii() {
            let mut extra = 0;
            for (i, (byte, c)) in text.char_indices().enumerate() {
                debug_assert_eq!(byte, i + extra);
                if c.len_utf8() > 1 {
                    extra += c.len_utf8() - 1;
                    wide.push((i, extra));
                }
            }
        }
        let extra = wide.last().map_or(0, |&(_, e)| e);
        CharOffsets {
            wide,
            chars: text.len() - extra,
        }
    }

    /// The byte offset of character `i` (`i` may be one past the last character).
    #[inline]
    fn byte_of(&self, i: usize) -> Option<usize> {
        if i > self.chars {
            return None;
        }
        if self.wide.is_empty() {
            // An ASCII text (nearly every file): characters are bytes.
            return Some(i);
        }
        // The wide characters before `i` are those with a smaller index.
        let before = self.wide.partition_point(|&(c, _)| c < i);
        let extra = before.checked_sub(1).map_or(0, |k| self.wide[k].1);
        Some(i + extra)
    }
}

/// An open collection. Its children so far are the tail of [`Builder::children`] (a
/// sequence's items) or of [`Builder::pairs`] (a mapping's pairs) from `first` on, so no
/// collection grows a vector of its own.
struct Frame {
    kind: FrameKind,
    start: Pos,
    anchor: usize,
    /// Where this collection's children start in [`Builder::children`] or [`Builder::pairs`].
    first: usize,
    /// A mapping's key waits on [`Builder::keys`] for its value.
    key_waiting: bool,
    /// Collection levels below this one so far (0: only scalars).
    below: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    Seq,
    Map,
}

/// An anchored node with what an alias to it costs: its node count (the alias budget) and
/// its collection levels (the depth limit).
struct Anchored {
    node: Node,
    count: usize,
    levels: usize,
}

/// Its steps return their error boxed: a `Result` as large as a [`Diagnostic`] was copied on
/// every scalar and collection, and boxing made the loader ~10 % faster (docs/performance.md,
/// "Boxed loader errors").
struct Builder<'a> {
    path: &'a Path,
    text: &'a str,
    opts: &'a LoadOptions,
    /// The parser's character indices as byte offsets, and the text's lines: built when first
    /// asked for, since the fast path needs neither (docs/yaml.md, "The fast path").
    char_to_byte: std::cell::OnceCell<CharOffsets>,
    line_index: std::cell::OnceCell<LineIndex>,
    anchors: HashMap<usize, Anchored>,
    alias_nodes: usize,
    stack: Vec<Frame>,
    /// The children of every open collection, innermost last. Each collection's vector is
    /// allocated once at its end, at its final size: growing one vector per collection by
    /// doubling was a tenth of the loader's time in allocation and copying
    /// (docs/performance.md).
    children: Vec<Node>,
    /// The pairs of every open mapping, innermost last, and the keys waiting for their values:
    /// a mapping's pairs are moved out in one copy when it ends (pairing its nodes one by one
    /// was the builder's largest cost; docs/performance.md).
    pairs: Vec<(Node, Node)>,
    keys: Vec<Node>,
    /// The keys written twice so far, unless [`DuplicateKeys::KeepLast`] (`None` until the
    /// first; under `Reject` only the earliest). The load goes on past them (the last value
    /// wins) and [`build`] puts them in source order.
    duplicates: Option<Vec<Diagnostic>>,
    /// Anchor names defined so far and where (PyYAML refuses a second definition).
    anchor_names: HashMap<String, Pos>,
    /// The parser reads U+FEFF as [`chars::BOM_STAND_IN`]; scalars turn it back.
    bom_stand_in: bool,
    /// Whether the fast path may read the text first (off only to compare it with the parser).
    fast: bool,
}

impl<'a> Builder<'a> {
    fn new(path: &'a Path, text: &'a str, opts: &'a LoadOptions) -> Self {
        Builder {
            path,
            text,
            opts,
            char_to_byte: std::cell::OnceCell::new(),
            line_index: std::cell::OnceCell::new(),
            anchors: HashMap::new(),
            alias_nodes: 0,
            stack: Vec::new(),
            children: Vec::new(),
            pairs: Vec::new(),
            keys: Vec::new(),
            duplicates: None,
            anchor_names: HashMap::new(),
            bom_stand_in: false,
            fast: true,
        }
    }

    fn lines(&self) -> &LineIndex {
        self.line_index.get_or_init(|| LineIndex::new(self.text))
    }

    fn char_offsets(&self) -> &CharOffsets {
        self.char_to_byte
            .get_or_init(|| CharOffsets::new(self.text))
    }

    fn pos(&self, m: &Marker) -> Pos {
        // The parser counts characters; the byte offset of character `i`, when it exists.
        let byte_of = |i: usize| self.char_offsets().byte_of(i);
        let exact = byte_of(m.index());
        // Every event has two positions, and a line search each was the loader's top cost after
        // the scanner (docs/performance.md). The marker's own line and column are used when
        // they verifiably name the same place as the line index would: the character `col`
        // before the marker starts line `line`. They do not always (an end marker can sit on a
        // line break with the next line's number, and a lone `\r` is a break to the parser
        // only).
        if let Some(offset) = exact
            && let Some(start) = m.index().checked_sub(m.col()).and_then(byte_of)
            && let Some(line) = self.lines().line_range(self.text, m.line())
            && line.start == start
            && offset <= line.end
        {
            return Pos::new(offset, m.line(), m.col() + 1);
        }
        self.lines()
            .pos(self.text, exact.unwrap_or(self.text.len()))
    }

    fn err(&self, code: infx_report::Code, pos: Pos, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::error(code, msg).at(self.path, Span::point(pos))
    }

    /// The load with PyYAML's character rules around it (docs/yaml.md, "Characters and
    /// tabs"): its reader refuses a non-printable character before reading anything, and a
    /// tab its scanner refuses stops the load there, before any later error.
    fn run(&mut self) -> Result<Node, Box<Diagnostic>> {
        let survey = chars::survey(self.text);
        if let Some((offset, c)) = survey.refused {
            let pos = self.lines().pos(self.text, offset);
            return Err(Box::new(
                self.err(codes::CHARACTER, pos, chars::refused_message(c))
                    .with_help("remove the character (in a double-quoted string, write it as an escape such as \\x7f)"),
            ));
        }
        // Nearly every file is block YAML the fast path reads alone; what it does not read
        // (and every error) the parser reads from the start (docs/yaml.md, "The fast path").
        if self.fast && survey.fast_readable() {
            match fast::read(self) {
                Ok(root) => return Ok(root),
                Err(fast::Bail) => self.reset(),
            }
        }
        // Tabs and YAML 1.1 breaks need the lexical pass; nearly every file has neither.
        let lexed = if survey.tabs || survey.breaks {
            chars::lex(self.text)
        } else {
            chars::Lexed::default()
        };
        // U+FEFF inside the text is content to PyYAML; the parser refuses it, so it reads a
        // stand-in that scalars turn back (unless the text holds the stand-in itself).
        self.bom_stand_in = survey.inner_bom && !self.text.contains(chars::BOM_STAND_IN);
        let translated;
        let input = if survey.breaks || self.bom_stand_in {
            translated = chars::parser_text(self.text, &lexed.breaks, self.bom_stand_in);
            translated.as_str()
        } else {
            self.text
        };
        let parsed = self.events(input);
        let Some(tab) = lexed.bad_tab else {
            return parsed;
        };
        // PyYAML stops at the tab unless an error comes before it. A tab in indentation the
        // parser takes for whitespace, and its own error then points at the line before
        // (where the line's token began, or its end): there the tab wins too.
        let tab_first = match &parsed {
            Ok(_) => true,
            Err(e) => e.span.is_none_or(|s| {
                let tab_pos = self.lines().pos(self.text, tab.offset);
                let line_start = tab.offset + 1 - tab_pos.col();
                let indentation = self
                    .text
                    .get(line_start..tab.offset)
                    .is_some_and(|t| t.bytes().all(|b| b == b' '));
                tab.offset < s.start.offset()
                    || e.message.contains("tab")
                    || (tab.line_key && e.code == codes::SYNTAX && tab_pos.line() == s.start.line())
                    || (indentation && tab_pos.line() <= s.start.line() + 1)
                    || (e.code == codes::DUPLICATE_ANCHOR
                        && self.tab_before_anchored_node(s.start.offset(), tab.offset))
            }),
        };
        if !tab_first {
            return parsed;
        }
        Err(Box::new(self.tab_error(&tab)))
    }

    /// Back to the state before the fast path began (it builds through the same steps).
    fn reset(&mut self) {
        self.stack.clear();
        self.children.clear();
        self.pairs.clear();
        self.keys.clear();
        self.duplicates = None;
        self.anchors.clear();
        self.anchor_names.clear();
        self.alias_nodes = 0;
    }

    /// A tab between the anchor at `amp` and its node's first token: PyYAML's parser reads
    /// the token after an anchor before the composer judges the anchor, so the tab comes first.
    fn tab_before_anchored_node(&self, amp: usize, tab: usize) -> bool {
        let Some(between) = self.text.get(amp + 1..tab) else {
            return false;
        };
        let name = between
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
            .count();
        between.bytes().skip(name).all(|b| b == b' ' || b == b'\t')
    }

    /// PyYAML's scanner error for a tab, at the tab (its context's start in the message).
    fn tab_error(&self, tab: &chars::TabError) -> Diagnostic {
        let pos = self.lines().pos(self.text, tab.offset);
        let (context, start) = tab.context;
        let message = match start {
            Some(start) => {
                let at = self.lines().pos(self.text, start);
                format!("{context} (at {}:{}): {}", at.line(), at.col(), tab.problem)
            }
            None => format!("{context}: {}", tab.problem),
        };
        if tab.is_simple_key() {
            // A key on an earlier line still waits for its `:` when the tab comes.
            return self.err(codes::SYNTAX, pos, message);
        }
        self.err(codes::TAB, pos, message).with_help(
            "PyYAML allows tabs only inside quoted or block scalars and comments: use spaces",
        )
    }

    /// A second node anchored with a name already used: PyYAML's composer refuses it. The
    /// name must also be one PyYAML's scanner reads (see [`Builder::name_fault`]).
    fn check_anchor_name(&mut self, node_start: Pos) -> Result<(), Box<Diagnostic>> {
        let from = node_start.offset();
        let rest = self.text.get(from..).unwrap_or("");
        let rest = match rest.strip_prefix('!') {
            // A tag first: the anchor follows it.
            Some(_) => rest
                .trim_start_matches(|c: char| !c.is_whitespace())
                .trim_start_matches([' ', '\t']),
            None => rest,
        };
        if !rest.starts_with('&') {
            return Ok(());
        }
        let amp = self.text.len() - rest.len();
        let name = self.name_fault(amp, "anchor")?;
        let pos = self.lines().pos(self.text, amp);
        if let Some(first) = self.anchor_names.get(name) {
            return Err(Box::new(
                self.err(
                    codes::DUPLICATE_ANCHOR,
                    pos,
                    format!(
                        "found duplicate anchor '{name}'; first occurrence at line {}:{}, second occurrence here",
                        first.line(),
                        first.col()
                    ),
                )
                .with_help("rename one of the two anchors (PyYAML refuses a redefined anchor)"),
            ));
        }
        self.anchor_names.insert(name.to_string(), pos);
        Ok(())
    }

    /// The name after the `&` or `*` at byte `at`, as PyYAML's scanner reads it: ASCII letters,
    /// digits, `-` and `_`, then a space, line break, or one of `?:,]}%@`` ` ``; else its
    /// error at the first other character.
    fn name_fault(&self, at: usize, what: &str) -> Result<&'a str, Box<Diagnostic>> {
        let text: &'a str = self.text;
        let body = text.get(at + 1..).unwrap_or("");
        let len = body
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
            .count();
        let next = body[len..].chars().next();
        let ends = match next {
            None => true,
            Some(c) => " \t\r\n\u{85}\u{2028}\u{2029}?:,]}%@`".contains(c),
        };
        if len > 0 && ends {
            return Ok(&body[..len]);
        }
        let bad = at + 1 + len;
        let pos = self.lines().pos(text, bad);
        let shown = next.map_or_else(|| "'\\x00'".to_string(), chars::py_repr);
        Err(Box::new(self.err(
            codes::SYNTAX,
            pos,
            format!("while scanning an {what}: expected alphabetic or numeric character, but found {shown}"),
        ).with_help("PyYAML's anchor and alias names are ASCII letters, digits, '-' and '_'")))
    }

    fn events(&mut self, input: &str) -> Result<Node, Box<Diagnostic>> {
        let mut parser = Parser::new(crate::input::TextInput::new(input));
        let mut root: Option<Node> = None;
        let mut documents = 0usize;
        while let Some(next) = parser.next_event() {
            let (event, span) = match next {
                Ok(ev) => ev,
                Err(e) => {
                    let pos = self.pos(e.marker());
                    if e.info() == PARSER_FLOW_LIMIT {
                        return Err(Box::new(self.too_deep(pos)));
                    }
                    return Err(Box::new(self.err(
                        codes::SYNTAX,
                        pos,
                        format!("YAML syntax error: {}", e.info()),
                    )));
                }
            };
            // Each event's positions are worked out only where it uses them: a collection's
            // start needs its first, an end its last (docs/performance.md, "A shorter
            // look-ahead").
            match event {
                Event::StreamStart | Event::Nothing | Event::DocumentEnd => {}
                Event::StreamEnd => break,
                Event::DocumentStart(_) => {
                    documents += 1;
                    if documents > 1 {
                        return Err(Box::new(
                            self.err(
                                codes::MULTI_DOCUMENT,
                                self.pos(&span.start),
                                "expected a single document in the stream, found another one",
                            )
                            .with_help("remove the extra `---` document or split the file"),
                        ));
                    }
                }
                Event::Alias(id) => {
                    let start = self.pos(&span.start);
                    self.alias(id, start, &mut root)?;
                }
                Event::Scalar(value, style, anchor, tag) => {
                    let span = Span {
                        start: self.pos(&span.start),
                        end: self.pos(&span.end),
                    };
                    let style = node_style(style);
                    if anchor != 0 {
                        self.check_anchor_name(span.start)?;
                    }
                    let value = if self.bom_stand_in && value.contains(chars::BOM_STAND_IN) {
                        Cow::Owned(value.replace(chars::BOM_STAND_IN, "\u{feff}"))
                    } else {
                        value
                    };
                    let value = self.scalar(value, style, tag.as_deref(), span)?;
                    let node = Node {
                        value,
                        span: self.tight_span(style, span),
                        style,
                    };
                    if anchor != 0 {
                        self.anchor(anchor, &node, 0)?;
                    }
                    self.push_node(node, 0, &mut root)?;
                }
                Event::SequenceStart(anchor, tag) => {
                    let start = self.pos(&span.start);
                    if anchor != 0 {
                        self.check_anchor_name(start)?;
                    }
                    self.open_collection(FrameKind::Seq, start, anchor, tag.as_deref())?;
                }
                Event::MappingStart(anchor, tag) => {
                    let start = self.pos(&span.start);
                    if anchor != 0 {
                        self.check_anchor_name(start)?;
                    }
                    self.open_collection(FrameKind::Map, start, anchor, tag.as_deref())?;
                }
                Event::SequenceEnd => {
                    let end = self.pos(&span.end);
                    let Some(frame) = self.stack.pop_if(|f| f.kind == FrameKind::Seq) else {
                        return Err(Box::new(self.err(
                            codes::SYNTAX,
                            self.pos(&span.start),
                            "unbalanced sequence end",
                        )));
                    };
                    self.close_seq(frame, end, &mut root)?;
                }
                Event::MappingEnd => {
                    let end = self.pos(&span.end);
                    let Some(frame) = self.stack.pop_if(|f| f.kind == FrameKind::Map) else {
                        return Err(Box::new(self.err(
                            codes::SYNTAX,
                            self.pos(&span.start),
                            "unbalanced mapping end",
                        )));
                    };
                    self.close_map(frame, end, &mut root)?;
                }
            }
        }
        let zero = self.lines().pos(self.text, 0);
        Ok(root.unwrap_or_else(|| Node::new(Value::Null, Span::point(zero))))
    }

    /// The alias at `start` to the anchor `id`: a copy of the anchored node, within the alias
    /// budget and the depth limit, added to the open collection.
    fn alias(
        &mut self,
        id: usize,
        start: Pos,
        root: &mut Option<Node>,
    ) -> Result<(), Box<Diagnostic>> {
        self.name_fault(start.offset(), "alias")?;
        let Some(target) = self.anchors.get(&id) else {
            return Err(Box::new(self.err(
                codes::SYNTAX,
                start,
                "alias refers to an unknown anchor",
            )));
        };
        let n = target.count;
        let levels = target.levels;
        self.alias_nodes = self.alias_nodes.saturating_add(n);
        if self.alias_nodes > self.opts.alias_budget {
            return Err(Box::new(self.over_alias_budget(start)));
        }
        let node = target.node.clone();
        if self.stack.len() + levels > self.opts.max_depth {
            return Err(Box::new(self.too_deep(start)));
        }
        self.push_node(node, levels, root)
    }

    /// Keeps a copy of an anchored node for its aliases. The copies count against the alias
    /// budget as expansions do: 250 anchors nested around one big list would otherwise copy
    /// it 250 times (a 200 KB file took 3 GB; docs/security.md).
    fn anchor(&mut self, id: usize, node: &Node, levels: usize) -> Result<(), Box<Diagnostic>> {
        let count = node.count();
        self.alias_nodes = self.alias_nodes.saturating_add(count);
        if self.alias_nodes > self.opts.alias_budget {
            return Err(Box::new(self.over_alias_budget(node.span.start)));
        }
        let anchored = Anchored {
            node: node.clone(),
            count,
            levels,
        };
        self.anchors.insert(id, anchored);
        Ok(())
    }

    fn over_alias_budget(&self, pos: Pos) -> Diagnostic {
        self.err(
            codes::ALIAS_BUDGET,
            pos,
            format!(
                "anchors and aliases copy more than the budget of {} nodes (a recursive or exponential alias structure, e.g. \"billion laughs\", or anchors nested around a large block)",
                self.opts.alias_budget
            ),
        )
        .with_help("write the data out instead of nesting aliases of aliases or anchors in anchors")
    }

    fn too_deep(&self, pos: Pos) -> Diagnostic {
        self.err(
            codes::TOO_DEEP,
            pos,
            format!(
                "lists and mappings nest deeper than {} levels here (aliases counted as expanded)",
                self.opts.max_depth
            ),
        )
        .with_help("flatten the structure: real configs and recipes nest fewer than 20 levels")
    }

    fn unknown_tag(&self, pos: Pos, tag: Option<&Tag>) -> Diagnostic {
        let shown = tag.map(|t| t.to_string()).unwrap_or_default();
        self.err(
            codes::TAG,
            pos,
            format!("could not determine a constructor for the tag '{shown}' (safe loading allows only standard YAML tags)"),
        )
    }

    /// A sequence or mapping starts: a tag must be the core schema's for its kind, and the
    /// nesting must stay within the depth limit.
    fn open_collection(
        &mut self,
        kind: FrameKind,
        start: Pos,
        anchor: usize,
        tag: Option<&Tag>,
    ) -> Result<(), Box<Diagnostic>> {
        let core_suffix = match kind {
            FrameKind::Seq => "seq",
            FrameKind::Map => "map",
        };
        if let Some(t) = tag
            && !(t.is_yaml_core_schema() && t.suffix == core_suffix)
        {
            return Err(Box::new(self.unknown_tag(start, Some(t))));
        }
        if self.stack.len() >= self.opts.max_depth {
            return Err(Box::new(self.too_deep(start)));
        }
        self.open(kind, start, anchor);
        Ok(())
    }

    fn open(&mut self, kind: FrameKind, start: Pos, anchor: usize) {
        let first = match kind {
            FrameKind::Seq => self.children.len(),
            FrameKind::Map => self.pairs.len(),
        };
        self.stack.push(Frame {
            kind,
            start,
            anchor,
            first,
            key_waiting: false,
            below: 0,
        });
    }

    /// The sequence of `frame` ends at `end`: its node, added to the collection around it.
    fn close_seq(
        &mut self,
        frame: Frame,
        end: Pos,
        root: &mut Option<Node>,
    ) -> Result<(), Box<Diagnostic>> {
        let items = self.children.split_off(frame.first);
        self.close(frame, Value::Seq(items), end, root)
    }

    /// The mapping of `frame` ends at `end`: its node, added to the collection around it.
    fn close_map(
        &mut self,
        frame: Frame,
        end: Pos,
        root: &mut Option<Node>,
    ) -> Result<(), Box<Diagnostic>> {
        // Every key has its value (an empty one is a null scalar); a key left waiting is
        // dropped, as a pairing of the nodes would.
        if frame.key_waiting {
            self.keys.pop();
        }
        let pairs = self.pairs.split_off(frame.first);
        let map = self.build_mapping(pairs)?;
        self.close(frame, Value::Map(map), end, root)
    }

    /// The collection of `frame`, holding `value`, ends at `end`: kept for its anchor and
    /// added to the collection around it.
    fn close(
        &mut self,
        frame: Frame,
        value: Value,
        end: Pos,
        root: &mut Option<Node>,
    ) -> Result<(), Box<Diagnostic>> {
        let mut node = Node::new(
            value,
            Span {
                start: frame.start,
                end,
            },
        );
        node.style = ScalarStyle::Collection;
        if frame.anchor != 0 {
            self.anchor(frame.anchor, &node, frame.below + 1)?;
        }
        self.push_node(node, frame.below + 1, root)
    }

    /// Adds a finished node (`levels`: its collection levels) to the open collection.
    fn push_node(
        &mut self,
        node: Node,
        levels: usize,
        root: &mut Option<Node>,
    ) -> Result<(), Box<Diagnostic>> {
        let Some(frame) = self.stack.last_mut() else {
            *root = Some(node);
            return Ok(());
        };
        frame.below = frame.below.max(levels);
        let is_key = frame.kind == FrameKind::Map && !frame.key_waiting;
        if is_key
            && matches!(node.value, Value::Seq(_) | Value::Map(_))
            && node.style == ScalarStyle::Collection
        {
            let pos = node.span.start;
            return Err(Box::new(self.err(
                codes::UNHASHABLE_KEY,
                pos,
                "a mapping key must be a scalar (found a list or mapping)",
            )));
        }
        match frame.kind {
            FrameKind::Seq => self.children.push(node),
            FrameKind::Map if is_key => {
                frame.key_waiting = true;
                self.keys.push(node);
            }
            FrameKind::Map => {
                frame.key_waiting = false;
                if let Some(key) = self.keys.pop() {
                    self.pairs.push((key, node));
                }
            }
        }
        Ok(())
    }

    /// PyYAML keeps a block scalar's final line break only when the source has one: a `|`/`>`
    /// scalar ending the file without a newline gets no trailing `\n` (the parser adds one).
    fn block_scalar_at_eof(&self, mut text: String, style: ScalarStyle, span: Span) -> String {
        let block = matches!(style, ScalarStyle::Literal | ScalarStyle::Folded);
        if block && !self.text.ends_with('\n') && text.ends_with('\n') && !text.ends_with("\n\n") {
            let tail_blank = self
                .text
                .get(span.end.offset()..)
                .is_some_and(|t| t.trim().is_empty());
            if tail_blank {
                text.pop();
            }
        }
        text
    }

    /// `value` is the parser's text, moved into the node when the parser already owns it.
    #[inline(always)]
    fn scalar(
        &self,
        value: Cow<'_, str>,
        node_style: ScalarStyle,
        tag: Option<&Tag>,
        span: Span,
    ) -> Result<Value, Box<Diagnostic>> {
        let text: &str = &value;
        let value = match tag {
            Some(t) => self.tagged_scalar(text, t, span)?,
            None if node_style == ScalarStyle::Plain => match resolve::resolve_plain(text) {
                Resolved::Null => Value::Null,
                Resolved::Bool(b) => Value::Bool(b),
                Resolved::Int(Ok(i)) => Value::Int(i),
                Resolved::Int(Err(())) => {
                    return Err(Box::new(self.err(
                        codes::INT_RANGE,
                        span.start,
                        format!("integer {text} does not fit in 64 bits"),
                    )));
                }
                Resolved::Float(f) => Value::Float(Float {
                    value: f,
                    text: owned_without_underscores(value),
                }),
                Resolved::Timestamp => Value::Timestamp(value.into_owned()),
                // The merge key itself is handled when the mapping is built.
                Resolved::Merge => Value::Str("<<".into()),
                Resolved::ValueTag => {
                    return Err(Box::new(
                        self.err(
                            codes::TAG,
                            span.start,
                            "a plain `=` is YAML's value tag, which safe loading cannot construct",
                        )
                        .with_help("quote it: '='"),
                    ));
                }
                Resolved::Str => Value::Str(value.into_owned()),
            },
            None => Value::Str(self.block_scalar_at_eof(value.into_owned(), node_style, span)),
        };
        Ok(value)
    }

    /// The parser's span of a quoted scalar can run past the closing quote (over spaces and a
    /// comment). Cut it at the closing quote so edits and carets cover exactly the scalar.
    fn tight_span(&self, style: ScalarStyle, span: Span) -> Span {
        let quote = match style {
            ScalarStyle::SingleQuoted => b'\'',
            ScalarStyle::DoubleQuoted => b'"',
            _ => return span,
        };
        let bytes = self.text.as_bytes();
        let start = span.start.offset();
        if bytes.get(start) != Some(&quote) {
            return span;
        }
        let mut i = start + 1;
        while i < bytes.len() {
            let b = bytes[i];
            if quote == b'"' && b == b'\\' {
                i += 2;
                continue;
            }
            if b == quote {
                if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                    i += 2;
                    continue;
                }
                let end = self.lines().pos(self.text, i + 1);
                return Span {
                    start: span.start,
                    end,
                };
            }
            i += 1;
        }
        span
    }

    fn tagged_scalar(&self, text: &str, tag: &Tag, span: Span) -> Result<Value, Box<Diagnostic>> {
        let bad = |what: &str| {
            Box::new(self.err(
                codes::TAG,
                span.start,
                format!("'{text}' is not a valid {what} for tag {tag}"),
            ))
        };
        if tag.handle == "!" && tag.suffix.is_empty() {
            // The non-specific `!` tag: a string.
            return Ok(Value::Str(text.to_string()));
        }
        if !tag.is_yaml_core_schema() {
            return Err(Box::new(self.unknown_tag(span.start, Some(tag))));
        }
        Ok(match tag.suffix.as_str() {
            "str" => Value::Str(text.to_string()),
            "null" => Value::Null,
            "bool" => Value::Bool(resolve::bool_value(text).ok_or_else(|| bad("bool"))?),
            "int" => {
                if !resolve::is_int(text) {
                    return Err(bad("int"));
                }
                Value::Int(resolve::int_value(text).map_err(|_| bad("64-bit int"))?)
            }
            "float" => {
                if resolve::is_float(text) {
                    Value::Float(Float {
                        value: resolve::float_value(text),
                        text: text.replace('_', "").into_boxed_str(),
                    })
                } else if resolve::is_int(text) {
                    let i = resolve::int_value(text).map_err(|_| bad("float"))?;
                    Value::Float(Float {
                        value: i as f64,
                        text: text.replace('_', "").into_boxed_str(),
                    })
                } else {
                    return Err(bad("float"));
                }
            }
            "timestamp" => {
                if !resolve::is_timestamp(text) {
                    return Err(bad("timestamp"));
                }
                Value::Timestamp(text.to_string())
            }
            _ => return Err(Box::new(self.unknown_tag(span.start, Some(tag)))),
        })
    }

    /// PyYAML's `flatten_mapping` + `construct_mapping`: `<<` values (a mapping, or a list of
    /// mappings where earlier ones win) are placed before the mapping's own pairs, then pairs
    /// are inserted in order with later ones winning and the first position kept.
    fn build_mapping(&mut self, pairs: Vec<(Node, Node)>) -> Result<Mapping, Box<Diagnostic>> {
        if !pairs.iter().any(|(k, _)| is_merge_key(k)) {
            return Ok(self.plain_mapping(pairs));
        }
        let mut merged: Vec<(Node, Node)> = Vec::new();
        let mut own: Vec<(Node, Node)> = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            if !is_merge_key(&k) {
                own.push((k, v));
                continue;
            }
            match v.value {
                Value::Map(m) => merged.extend(m.into_pairs()),
                Value::Seq(items) => {
                    let mut sub = Vec::new();
                    for item in items {
                        match item.value {
                            Value::Map(m) => sub.push(m),
                            _ => {
                                return Err(Box::new(self.err(
                                    codes::MERGE,
                                    item.span.start,
                                    format!(
                                        "expected a mapping for merging, but found {}",
                                        item.value.type_name()
                                    ),
                                )));
                            }
                        }
                    }
                    for m in sub.into_iter().rev() {
                        merged.extend(m.into_pairs());
                    }
                }
                _ => {
                    return Err(Box::new(self.err(
                        codes::MERGE,
                        v.span.start,
                        format!(
                            "expected a mapping or list of mappings for merging, but found {}",
                            v.value.type_name()
                        ),
                    )));
                }
            }
        }
        // Merged pairs first (later ones win, first position kept), then the mapping's own
        // pairs; an own key written twice is a duplicate, overriding a merged key is not.
        let mut out = Mapping::with_capacity(merged.len() + own.len());
        for (k, v) in merged {
            match out.position_of(&k).and_then(|i| out.pair_mut(i)) {
                Some(slot) => slot.1 = v,
                None => out.push_new(k, v),
            }
        }
        let merged_len = out.len();
        let mut own_seen: Vec<bool> = vec![false; merged_len];
        for (k, v) in own {
            let Some(idx) = out.position_of(&k) else {
                out.push_new(k, v);
                own_seen.push(true);
                continue;
            };
            if own_seen.get(idx).copied().unwrap_or(true)
                && self.opts.duplicate_keys != DuplicateKeys::KeepLast
                && let Some((first, _)) = out.pair_mut(idx)
            {
                let d = self.duplicate_key(first, &k);
                self.record_duplicate(d);
            }
            if let Some(seen) = own_seen.get_mut(idx) {
                *seen = true;
            }
            // An own key overriding a merged one keeps the merged position (PyYAML), but the
            // key node now points at the key as written here.
            if let Some(slot) = out.pair_mut(idx) {
                *slot = (k, v);
            }
        }
        Ok(out)
    }

    /// A mapping without merge keys (nearly all of them): the pairs as written, in order.
    fn plain_mapping(&mut self, pairs: Vec<(Node, Node)>) -> Mapping {
        let pairs = match Mapping::from_distinct_pairs(pairs) {
            Ok(mapping) => return mapping,
            Err(pairs) => pairs,
        };
        // A key written twice: the last value wins at the first position (recorded unless
        // `KeepLast`).
        let mut out = Mapping::with_capacity(pairs.len());
        for (k, v) in pairs {
            let Some(slot) = out.position_of(&k).and_then(|i| out.pair_mut(i)) else {
                out.push_new(k, v);
                continue;
            };
            if self.opts.duplicate_keys != DuplicateKeys::KeepLast {
                let d = self.duplicate_key(&slot.0, &k);
                self.record_duplicate(d);
            }
            // The last value wins at the first position, as in a Python dict.
            *slot = (k, v);
        }
        out
    }

    /// Keeps a duplicate key's error for the end of the load: stopping at the first one met
    /// would name an inner mapping's duplicate before an earlier one in an outer mapping.
    fn record_duplicate(&mut self, d: Diagnostic) {
        let recorded = self.duplicates.get_or_insert_with(Vec::new);
        // Reject reports one: only the earliest so far is kept, so a file of many duplicates
        // costs one finding, as when the first one stopped the load.
        if self.opts.duplicate_keys == DuplicateKeys::Reject {
            if recorded
                .first()
                .is_some_and(|kept| source_order(kept) <= source_order(&d))
            {
                return;
            }
            recorded.clear();
        }
        recorded.push(d);
    }

    fn duplicate_key(&self, first: &Node, again: &Node) -> Diagnostic {
        let first_span = first.span;
        let at = first_span.start;
        let shown = self.text.get(again.span.byte_range()).unwrap_or("?");
        self.err(
            codes::DUPLICATE_KEY,
            again.span.start,
            format!(
                "duplicate key {shown} in this mapping (first at line {}:{}); PyYAML would silently keep only the last value",
                at.line(), at.col()
            ),
        )
        .with_help("remove one of the two entries")
        .with_label(first_span, "first defined here")
    }
}

/// The parser's text without `_`, moved rather than copied when it owns it and has none
/// (boxing then reallocates only when the string has spare capacity).
fn owned_without_underscores(text: Cow<'_, str>) -> Box<str> {
    match resolve::without_underscores(&text) {
        Cow::Borrowed(_) => text.into_owned().into_boxed_str(),
        Cow::Owned(cleaned) => cleaned.into_boxed_str(),
    }
}

/// The node style of a scalar the parser read in `style`.
fn node_style(style: PStyle) -> ScalarStyle {
    match style {
        PStyle::Plain => ScalarStyle::Plain,
        PStyle::SingleQuoted => ScalarStyle::SingleQuoted,
        PStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
        PStyle::Literal => ScalarStyle::Literal,
        PStyle::Folded => ScalarStyle::Folded,
    }
}

/// A plain `<<` key: YAML 1.1's merge key.
fn is_merge_key(k: &Node) -> bool {
    k.style == ScalarStyle::Plain && matches!(&k.value, Value::Str(s) if s == "<<")
}

#[cfg(test)]
mod tests {
    use super::CharOffsets;
    use proptest::prelude::*;

    proptest! {
        /// The sparse map names the same byte as the full table it replaced, for every
        /// character index and one past the end, and nothing beyond.
        #[test]
        fn char_offsets_match_char_indices(text in "[a-z\\n é€😀\\t]{0,60}") {
            let map = CharOffsets::new(&text);
            let mut table: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
            table.push(text.len());
            for (i, byte) in table.iter().enumerate() {
                prop_assert_eq!(map.byte_of(i), Some(*byte));
            }
            prop_assert_eq!(map.byte_of(table.len()), None);
        }
    }
}
