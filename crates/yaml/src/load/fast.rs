//! The loader's fast path: block mappings and sequences of one-line scalars and one-line flow
//! collections, the YAML nearly every tree file is written in, built straight from the bytes
//! without the parser's tokens and events (docs/yaml.md, "The fast path"). It builds through
//! the same [`Builder`] steps as the events do (scalars resolved, mappings built, duplicates
//! recorded, depth checked), and the nodes' spans are those the events give.
//!
//! It gives up ([`Bail`]) at the first thing it does not read itself, or whose reading could
//! differ from the parser's: an anchor on a key or an empty node, tags, block scalars, scalars over several lines,
//! flow collections over several lines, escapes in double quotes, document markers,
//! directives, explicit keys, a carriage return, a tab, a YAML 1.1 line break, a byte order
//! mark, and every error (the builder's too). The caller then parses the whole text with the
//! parser, so every error, and every file the fast path does not know, reads as before.

use super::{Builder, FrameKind};
use crate::value::{Node, ScalarStyle};
use crate::{Pos, Span};
use std::borrow::Cow;

/// The fast path gives up: the parser reads the file.
pub(super) struct Bail;

type Fast<T> = Result<T, Bail>;

impl<T> From<Box<T>> for Bail {
    fn from(_: Box<T>) -> Bail {
        Bail
    }
}

/// The longest key read here: PyYAML refuses a simple key past 1024 characters.
const MAX_KEY_BYTES: usize = 1000;

/// An open block collection: its kind and the column its entries start at (0-based, in
/// bytes: only spaces and `- ` precede it on its line).
struct Block {
    kind: FrameKind,
    col: usize,
    /// A sequence whose dashes sit at its mapping's column (`key:` then `- item`).
    indentless: bool,
}

/// What the last line left open.
#[derive(Clone, Copy)]
enum Pending {
    Nothing,
    /// `key:` with nothing after it: a block collection follows, or the value is null at the
    /// colon.
    Value(Pos),
    /// `-` with nothing after it: a block collection follows, or the item is null just after
    /// the dash.
    Item(Pos),
}

struct Reader<'b, 'a> {
    b: &'b mut Builder<'a>,
    text: &'a str,
    bytes: &'a [u8],
    ascii: bool,
    /// The current line: its 1-based number and where it starts.
    line: usize,
    line_start: usize,
    blocks: Vec<Block>,
    root: Option<Node>,
    /// An anchor (`&name`) read and waiting for its node: the next node starts at it.
    anchor: Option<Anchor>,
    /// Anchor names defined so far and their ids (a name is defined once: PyYAML refuses a
    /// second definition, which is left to the parser).
    anchor_ids: std::collections::HashMap<&'a str, usize>,
}

/// An anchor waiting for its node: its id and where its `&` is.
#[derive(Clone, Copy)]
struct Anchor {
    id: usize,
    at: Pos,
}

/// The tree of `b`'s text when the fast path reads all of it; `Err(Bail)` otherwise (the
/// builder's state is then partial: the caller resets it).
pub(super) fn read(b: &mut Builder<'_>) -> Fast<Node> {
    let text = b.text;
    let bytes = text.as_bytes();
    if memchr::memchr(b'\r', bytes).is_some() || text.starts_with('\u{feff}') {
        return Err(Bail);
    }
    let mut r = Reader {
        b,
        text,
        bytes,
        ascii: text.is_ascii(),
        line: 1,
        line_start: 0,
        blocks: Vec::new(),
        root: None,
        anchor: None,
        anchor_ids: std::collections::HashMap::new(),
    };
    r.document()?;
    r.root.take().ok_or(Bail)
}

/// The byte is a space or the end of a line (or of the text).
fn blank(b: Option<&u8>) -> bool {
    matches!(b, None | Some(b' ' | b'\n'))
}

impl<'a> Reader<'_, 'a> {
    /// The position of byte `at`, which lies on the current line.
    fn pos(&self, at: usize) -> Pos {
        let col = if self.ascii {
            at - self.line_start
        } else {
            // Columns count characters: every byte but UTF-8's continuation bytes.
            self.bytes[self.line_start..at]
                .iter()
                .filter(|&&b| (b as i8) >= -0x40)
                .count()
        };
        Pos::new(at, self.line, col + 1)
    }

    fn byte(&self, at: usize) -> Option<u8> {
        self.bytes.get(at).copied()
    }

    fn skip_spaces(&self, mut at: usize) -> usize {
        while self.byte(at) == Some(b' ') {
            at += 1;
        }
        at
    }

    /// The end of the line holding `at`: its line break, or the end of the text.
    fn line_end(&self, at: usize) -> usize {
        memchr::memchr(b'\n', &self.bytes[at..]).map_or(self.bytes.len(), |n| at + n)
    }

    /// Moves to the line after the one ending at `end` (a line break or the end of the text).
    fn next_line(&mut self, end: usize) -> usize {
        if end < self.bytes.len() {
            self.line += 1;
            self.line_start = end + 1;
            end + 1
        } else {
            end
        }
    }

    fn document(&mut self) -> Fast<()> {
        let mut at = 0;
        let mut pending = Pending::Nothing;
        loop {
            // The next line with content, past blank lines and comment lines.
            let indent_end = self.skip_spaces(at);
            match self.byte(indent_end) {
                None => break,
                Some(b'\n') => {
                    at = self.next_line(indent_end);
                    continue;
                }
                Some(b'#') => {
                    let end = self.line_end(indent_end);
                    at = self.next_line(end);
                    continue;
                }
                Some(_) => {}
            }
            let col = indent_end - at;
            let first = indent_end;
            if col == 0 {
                let rest = &self.bytes[first..];
                if rest.starts_with(b"---") || rest.starts_with(b"...") || rest[0] == b'%' {
                    return Err(Bail);
                }
            }
            let dash = self.bytes[first] == b'-' && blank(self.bytes.get(first + 1));
            let end = self.line_content(first, col, dash, pending)?;
            pending = end.1;
            at = self.next_line(end.0);
        }
        let eof = self.pos(self.bytes.len());
        self.settle(pending)?;
        if self.root.is_none() && self.blocks.is_empty() {
            return Err(Bail);
        }
        while let Some(block) = self.blocks.pop() {
            self.close(block, eof)?;
        }
        Ok(())
    }

    /// A pending value or item with no collection after it: null.
    fn settle(&mut self, pending: Pending) -> Fast<()> {
        match pending {
            // An anchored empty node is the parser's to place.
            _ if self.anchor.is_some() => Err(Bail),
            Pending::Nothing => Ok(()),
            Pending::Value(at) | Pending::Item(at) => {
                self.scalar(Cow::Borrowed(""), Span::point(at))
            }
        }
    }

    /// One line whose content starts at byte `first`, column `col`: where the line ends and
    /// what it leaves pending.
    fn line_content(
        &mut self,
        first: usize,
        col: usize,
        dash: bool,
        pending: Pending,
    ) -> Fast<(usize, Pending)> {
        let top = self.blocks.last().map(|b| b.col);
        match (pending, top) {
            (Pending::Value(_) | Pending::Item(_), Some(top)) if col > top => {
                return self.deeper(first, col, dash);
            }
            (Pending::Value(_), Some(top)) if col == top && dash => {
                return self.open_block(first, col, dash, true);
            }
            (_, None) => {
                if col != 0 || self.root.is_some() {
                    return Err(Bail);
                }
                return self.open_block(first, col, dash, false);
            }
            _ => self.settle(pending)?,
        }
        // Collections deeper than this line end where its content starts.
        let here = self.pos(first);
        while let Some(block) = self.blocks.last() {
            let ends = block.col > col || (block.indentless && block.col == col && !dash);
            if !ends {
                break;
            }
            let Some(block) = self.blocks.pop() else {
                break;
            };
            self.close(block, here)?;
        }
        match self.blocks.last() {
            Some(block) if block.col == col => {
                if block.kind == FrameKind::Seq {
                    if !dash {
                        return Err(Bail);
                    }
                    self.item(first)
                } else {
                    if dash {
                        return Err(Bail);
                    }
                    self.entry(first)
                }
            }
            _ => Err(Bail),
        }
    }

    /// The node of a pending key or item on a deeper line: a block collection, or a scalar or
    /// flow collection written on the line after its key or dash.
    fn deeper(&mut self, first: usize, col: usize, dash: bool) -> Fast<(usize, Pending)> {
        if dash || self.scan_key(first)?.0 {
            return self.open_block(first, col, dash, false);
        }
        if self.anchor.is_some() {
            return Err(Bail);
        }
        let end = self.value(first)?;
        Ok((self.rest_of_line(end)?, Pending::Nothing))
    }

    /// A block collection starts at byte `first` (column `col`) with this line's entry.
    fn open_block(
        &mut self,
        first: usize,
        col: usize,
        dash: bool,
        indentless: bool,
    ) -> Fast<(usize, Pending)> {
        let kind = if dash { FrameKind::Seq } else { FrameKind::Map };
        // The parser starts an indentless sequence where its first item's token is: after the
        // dash, or at the line's end when nothing follows it there.
        let start = if indentless {
            self.pos(self.token_after(first + 1))
        } else {
            self.pos(first)
        };
        self.open(kind, start)?;
        self.blocks.push(Block {
            kind,
            col,
            indentless,
        });
        if dash {
            self.item(first)
        } else {
            self.entry(first)
        }
    }

    /// A collection opens at `start`, or at the anchor waiting for it.
    fn open(&mut self, kind: FrameKind, start: Pos) -> Fast<()> {
        match self.anchor.take() {
            Some(a) => {
                self.b.check_anchor_name(a.at)?;
                self.b.open_collection(kind, a.at, a.id, None)?;
            }
            None => self.b.open_collection(kind, start, 0, None)?,
        }
        Ok(())
    }

    /// An anchor's name at `at` (its `&`), then spaces: where its node starts. Names are
    /// PyYAML's (ASCII letters, digits, `-`, `_`) before a space or the line's end.
    fn anchor_at(&mut self, at: usize) -> Fast<usize> {
        let end = self.name_end(at)?;
        if !blank(self.bytes.get(end)) || self.anchor.is_some() {
            return Err(Bail);
        }
        let name = &self.text[at + 1..end];
        let id = self.anchor_ids.len() + 1;
        if self.anchor_ids.insert(name, id).is_some() {
            return Err(Bail);
        }
        self.anchor = Some(Anchor {
            id,
            at: self.pos(at),
        });
        Ok(self.skip_spaces(end))
    }

    /// Where the anchor or alias name after the indicator at `at` ends.
    fn name_end(&self, at: usize) -> Fast<usize> {
        let len = self.bytes[at + 1..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
            .count();
        if len == 0 {
            return Err(Bail);
        }
        Ok(at + 1 + len)
    }

    /// An alias (`*name`) at `at` to an anchor defined before; where it ends. What may follow
    /// it is checked by the caller, as after any scalar.
    fn alias(&mut self, at: usize) -> Fast<usize> {
        let end = self.name_end(at)?;
        let ends = matches!(
            self.byte(end),
            None | Some(b' ' | b'\n' | b',' | b']' | b'}')
        );
        let id = self.anchor_ids.get(&self.text[at + 1..end]).copied();
        let (Some(id), true, None) = (id, ends, self.anchor) else {
            return Err(Bail);
        };
        self.b.alias(id, self.pos(at), &mut self.root)?;
        Ok(end)
    }

    fn close(&mut self, block: Block, end: Pos) -> Fast<()> {
        self.close_kind(block.kind, end)
    }

    /// The innermost open collection, of `kind`, ends at `end`.
    fn close_kind(&mut self, kind: FrameKind, end: Pos) -> Fast<()> {
        let frame = self.b.stack.pop().ok_or(Bail)?;
        match kind {
            FrameKind::Seq => self.b.close_seq(frame, end, &mut self.root)?,
            FrameKind::Map => self.b.close_map(frame, end, &mut self.root)?,
        }
        Ok(())
    }

    /// Where the next token after `at` is on this line: past spaces, or the line's end when
    /// only spaces and a comment follow.
    fn token_after(&self, at: usize) -> usize {
        let at = self.skip_spaces(at);
        match self.byte(at) {
            Some(b'#') => self.line_end(at),
            _ => at,
        }
    }

    /// A sequence item: the dash at `dash`. An empty item is null where the parser puts it: at
    /// the line's end.
    fn item(&mut self, dash: usize) -> Fast<(usize, Pending)> {
        let after = dash + 1;
        let mut at = self.skip_spaces(after);
        if self.byte(at) == Some(b'&') {
            at = self.anchor_at(at)?;
        }
        match self.byte(at) {
            None | Some(b'\n') => return Ok((at, Pending::Item(self.pos(at)))),
            Some(b'#') if at > after => {
                let end = self.line_end(at);
                return Ok((end, Pending::Item(self.pos(end))));
            }
            Some(b'-') if blank(self.bytes.get(at + 1)) => return Err(Bail),
            Some(b'*') => {
                let end = self.alias(at)?;
                return Ok((self.rest_of_line(end)?, Pending::Nothing));
            }
            _ => {}
        }
        // `- key: value` starts a mapping at the key's column.
        let (is_key, _) = self.scan_key(at)?;
        if is_key {
            if self.anchor.is_some() {
                return Err(Bail);
            }
            let col = at - self.line_start;
            return self.open_block(at, col, false, false);
        }
        let end = self.value(at)?;
        Ok((self.rest_of_line(end)?, Pending::Nothing))
    }

    /// Whether the scalar at `at` is a key (followed by `:` and a space or the line's end), and
    /// where its scalar ends.
    fn scan_key(&self, at: usize) -> Fast<(bool, usize)> {
        let end = match self.byte(at) {
            Some(q @ (b'\'' | b'"')) => self.quoted_end(at, q)?,
            Some(b'[' | b'{') => return Ok((false, at)),
            _ => {
                let (end, stop) = self.plain_block(at)?;
                return Ok((stop == Stop::Colon, end));
            }
        };
        let colon = self.skip_spaces(end);
        Ok((
            self.byte(colon) == Some(b':') && blank(self.bytes.get(colon + 1)),
            end,
        ))
    }

    /// A mapping entry whose key starts at `at`.
    fn entry(&mut self, at: usize) -> Fast<(usize, Pending)> {
        let key_end = match self.byte(at) {
            Some(q @ (b'\'' | b'"')) => {
                let end = self.quoted_end(at, q)?;
                self.quoted(at, end, q)?;
                end
            }
            _ => {
                let (end, stop) = self.plain_block(at)?;
                if stop != Stop::Colon || end - at > MAX_KEY_BYTES {
                    return Err(Bail);
                }
                self.plain(at, end)?;
                end
            }
        };
        let colon = self.skip_spaces(key_end);
        if self.byte(colon) != Some(b':') || !blank(self.bytes.get(colon + 1)) {
            return Err(Bail);
        }
        let mut at = self.skip_spaces(colon + 1);
        if self.byte(at) == Some(b'&') {
            at = self.anchor_at(at)?;
        }
        match self.byte(at) {
            None | Some(b'\n') => Ok((at, Pending::Value(self.pos(colon)))),
            Some(b'#') if at > colon + 1 => {
                Ok((self.line_end(at), Pending::Value(self.pos(colon))))
            }
            _ => {
                let end = self.value(at)?;
                Ok((self.rest_of_line(end)?, Pending::Nothing))
            }
        }
    }

    /// After a value: spaces, then a comment or the line's end. Where the line ends.
    fn rest_of_line(&self, end: usize) -> Fast<usize> {
        let at = self.skip_spaces(end);
        match self.byte(at) {
            None | Some(b'\n') => Ok(at),
            Some(b'#') if at > end => Ok(self.line_end(at)),
            _ => Err(Bail),
        }
    }

    /// A value in block context at `at`: a scalar or a flow collection on this line. Where it
    /// ends.
    fn value(&mut self, at: usize) -> Fast<usize> {
        self.node(at, false)
    }

    /// A node in flow context at `at` (an anchor may come first); where it ends.
    fn flow_node(&mut self, at: usize) -> Fast<usize> {
        self.node(at, true)
    }

    /// A scalar, alias or flow collection at `at`, its plain scalars read by the rules of
    /// flow context or of block context; where it ends.
    fn node(&mut self, mut at: usize, flow: bool) -> Fast<usize> {
        if flow && self.byte(at) == Some(b'&') {
            at = self.anchor_at(at)?;
        }
        match self.byte(at) {
            Some(b'*') => self.alias(at),
            Some(q @ (b'\'' | b'"')) => {
                let end = self.quoted_end(at, q)?;
                self.quoted(at, end, q)?;
                Ok(end)
            }
            Some(b'[') => self.flow_seq(at),
            Some(b'{') => self.flow_map(at),
            _ if flow => {
                let end = self.plain_flow(at)?;
                self.plain(at, end)?;
                Ok(end)
            }
            _ => {
                let (end, stop) = self.plain_block(at)?;
                if stop == Stop::Colon {
                    return Err(Bail);
                }
                self.plain(at, end)?;
                Ok(end)
            }
        }
    }

    /// A plain scalar in block context from `at`: where its text ends (trailing spaces left
    /// out) and what stopped it.
    fn plain_block(&self, at: usize) -> Fast<(usize, Stop)> {
        if !plain_start(self.bytes, at, false) {
            return Err(Bail);
        }
        // Only a line break, a `:` or a `#` can end it: found by `memchr3`, then looked at.
        let mut from = at;
        let (mut end, stop) = loop {
            let rest = self.bytes.get(from..).unwrap_or_default();
            let Some(n) = memchr::memchr3(b'\n', b':', b'#', rest) else {
                break (self.bytes.len(), Stop::Line);
            };
            let i = from + n;
            match self.bytes[i] {
                b'\n' => break (i, Stop::Line),
                b'#' if i > at && self.bytes[i - 1] == b' ' => break (i - 1, Stop::Comment),
                b':' if blank(self.bytes.get(i + 1)) => break (i, Stop::Colon),
                _ => from = i + 1,
            }
        };
        // The scalar's text ends at its last character that is not a space.
        while end > at && self.bytes[end - 1] == b' ' {
            end -= 1;
        }
        Ok((end, stop))
    }

    /// A plain scalar in flow context from `at`: where its text ends. Gives up where PyYAML
    /// and the parser could read a character differently (`?`, a `:` before the line's end or
    /// a bracket, `#` after a space, a bracket inside).
    fn plain_flow(&self, at: usize) -> Fast<usize> {
        if !plain_start(self.bytes, at, true) {
            return Err(Bail);
        }
        let mut i = at;
        let mut last = at;
        loop {
            match self.byte(i) {
                None | Some(b'\n' | b'?' | b'[' | b'{') => return Err(Bail),
                Some(b',' | b']' | b'}') => break,
                Some(b' ') => {
                    if self.byte(i + 1) == Some(b'#') {
                        return Err(Bail);
                    }
                }
                // PyYAML ends a plain scalar in flow context at a `:` before a space or a flow
                // indicator only (`image: a:b` inside braces is one scalar).
                Some(b':') => {
                    if matches!(self.byte(i + 1), Some(b' ' | b',' | b']' | b'}')) {
                        break;
                    }
                    if matches!(self.byte(i + 1), None | Some(b'\n' | b'[' | b'{')) {
                        return Err(Bail);
                    }
                    last = i + 1;
                }
                Some(_) => last = i + 1,
            }
            i += 1;
        }
        Ok(last)
    }

    /// Where the quoted scalar starting at `at` (quote `q`) ends, after its closing quote;
    /// only one-line scalars.
    fn quoted_end(&self, at: usize, q: u8) -> Fast<usize> {
        let mut i = at + 1;
        loop {
            let rest = self.bytes.get(i..).unwrap_or_default();
            let Some(n) = memchr::memchr3(q, b'\\', b'\n', rest) else {
                return Err(Bail);
            };
            i += n;
            match self.bytes[i] {
                b'\n' => return Err(Bail),
                b'\\' if q == b'"' => {
                    // An escape; a backslash ending the line continues the scalar on the next.
                    if blank(self.bytes.get(i + 1)) && self.byte(i + 1) != Some(b' ') {
                        return Err(Bail);
                    }
                    i += 2;
                }
                b'\\' => i += 1,
                _ if q == b'\'' && self.byte(i + 1) == Some(b'\'') => i += 2,
                _ => return Ok(i + 1),
            }
        }
    }

    fn quoted(&mut self, at: usize, end: usize, q: u8) -> Fast<()> {
        let inner = &self.text[at + 1..end - 1];
        let (text, style) = if q == b'"' {
            let text = if inner.contains('\\') {
                Cow::Owned(unescape(inner).ok_or(Bail)?)
            } else {
                Cow::Borrowed(inner)
            };
            (text, ScalarStyle::DoubleQuoted)
        } else if inner.contains("''") {
            (
                Cow::Owned(inner.replace("''", "'")),
                ScalarStyle::SingleQuoted,
            )
        } else {
            (Cow::Borrowed(inner), ScalarStyle::SingleQuoted)
        };
        let span = Span {
            start: self.pos(at),
            end: self.pos(end),
        };
        self.push_scalar(text, style, span)
    }

    fn plain(&mut self, at: usize, end: usize) -> Fast<()> {
        let span = Span {
            start: self.pos(at),
            end: self.pos(end),
        };
        self.push_scalar(Cow::Borrowed(&self.text[at..end]), ScalarStyle::Plain, span)
    }

    /// A null or other plain scalar at a point (an empty value).
    fn scalar(&mut self, text: Cow<'a, str>, span: Span) -> Fast<()> {
        self.push_scalar(text, ScalarStyle::Plain, span)
    }

    /// A scalar's node, added to the open collection; an anchored one starts at its anchor.
    fn push_scalar(&mut self, text: Cow<'a, str>, style: ScalarStyle, span: Span) -> Fast<()> {
        let Some(a) = self.anchor.take() else {
            let value = self.b.scalar(text, style, None, span)?;
            let node = Node { value, span, style };
            self.b.push_node(node, 0, &mut self.root)?;
            return Ok(());
        };
        let span = Span {
            start: a.at,
            end: span.end,
        };
        self.b.check_anchor_name(a.at)?;
        let value = self.b.scalar(text, style, None, span)?;
        let node = Node { value, span, style };
        self.b.anchor(a.id, &node, 0)?;
        self.b.push_node(node, 0, &mut self.root)?;
        Ok(())
    }

    /// A flow sequence on one line, `[` at `at`; where it ends (after `]`).
    fn flow_seq(&mut self, at: usize) -> Fast<usize> {
        self.open(FrameKind::Seq, self.pos(at))?;
        let mut i = self.skip_spaces(at + 1);
        if self.byte(i) != Some(b']') {
            loop {
                let end = self.flow_node(i)?;
                i = self.skip_spaces(end);
                match self.flow_next(i, b']')? {
                    Some(next) => i = next,
                    None => break,
                }
            }
        }
        self.flow_end(FrameKind::Seq, i)
    }

    /// A flow mapping on one line, `{` at `at`; where it ends (after `}`).
    fn flow_map(&mut self, at: usize) -> Fast<usize> {
        self.open(FrameKind::Map, self.pos(at))?;
        let mut i = self.skip_spaces(at + 1);
        if self.byte(i) != Some(b'}') {
            loop {
                let key_end = match self.byte(i) {
                    Some(b'[' | b'{' | b'&' | b'*') => return Err(Bail),
                    _ => self.flow_node(i)?,
                };
                let colon = self.skip_spaces(key_end);
                if self.byte(colon) != Some(b':') {
                    return Err(Bail);
                }
                i = self.skip_spaces(colon + 1);
                if i == colon + 1 && !matches!(self.byte(i), Some(b',' | b'}')) {
                    return Err(Bail);
                }
                if matches!(self.byte(i), Some(b',' | b'}')) {
                    self.scalar(Cow::Borrowed(""), Span::point(self.pos(colon)))?;
                } else {
                    let end = self.flow_node(i)?;
                    i = self.skip_spaces(end);
                }
                match self.flow_next(i, b'}')? {
                    Some(next) => i = next,
                    None => break,
                }
            }
        }
        self.flow_end(FrameKind::Map, i)
    }

    /// After an entry of a flow collection, at `i`: where the next entry starts after a comma,
    /// or `None` at the closing bracket `close`. (A comma right before the bracket ends the
    /// parser's collection at the bracket, not after it: the next entry's read gives up.)
    fn flow_next(&self, i: usize, close: u8) -> Fast<Option<usize>> {
        match self.byte(i) {
            Some(b',') => Ok(Some(self.skip_spaces(i + 1))),
            Some(c) if c == close => Ok(None),
            _ => Err(Bail),
        }
    }

    /// A flow collection's closing bracket at `at`: the collection ends where the parser ends
    /// it, at the next token after the bracket (past spaces, and a comment to the line's end).
    /// Where it ends in the text (after the bracket).
    fn flow_end(&mut self, kind: FrameKind, at: usize) -> Fast<usize> {
        let end = self.pos(self.token_after(at + 1));
        self.close_kind(kind, end)?;
        Ok(at + 1)
    }
}

/// What ended a plain scalar in block context.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Stop {
    /// The line's end.
    Line,
    /// ` #`: a comment.
    Comment,
    /// `:` before a space or the line's end: the scalar is a key.
    Colon,
}

/// Whether a plain scalar may start at `at` as read here: not an indicator (PyYAML's
/// scanner), and `-` only before a character that is not a space (nor, in flow context, a
/// flow indicator). `?` and `:` starts are the parser's.
fn plain_start(bytes: &[u8], at: usize, flow: bool) -> bool {
    match bytes.get(at) {
        None => false,
        Some(b'-') => match bytes.get(at + 1) {
            None | Some(b' ' | b'\n') => false,
            Some(b',' | b'[' | b']' | b'{' | b'}') => !flow,
            Some(_) => true,
        },
        Some(
            b' ' | b'\n' | b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*'
            | b'!' | b'|' | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`',
        ) => false,
        Some(_) => true,
    }
}

/// The text of a one-line double-quoted scalar with its escapes read (YAML's escapes, which
/// PyYAML and the parser share); `None` for an escape they do not know or a code that is not
/// a character (the parser then reads the file and reports it).
fn unescape(inner: &str) -> Option<String> {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let digits = match chars.next()? {
            '0' => {
                out.push('\0');
                continue;
            }
            'a' => {
                out.push('\x07');
                continue;
            }
            'b' => {
                out.push('\x08');
                continue;
            }
            't' => {
                out.push('\t');
                continue;
            }
            'n' => {
                out.push('\n');
                continue;
            }
            'v' => {
                out.push('\x0b');
                continue;
            }
            'f' => {
                out.push('\x0c');
                continue;
            }
            'r' => {
                out.push('\r');
                continue;
            }
            'e' => {
                out.push('\x1b');
                continue;
            }
            'N' => {
                out.push('\u{85}');
                continue;
            }
            '_' => {
                out.push('\u{a0}');
                continue;
            }
            'L' => {
                out.push('\u{2028}');
                continue;
            }
            'P' => {
                out.push('\u{2029}');
                continue;
            }
            e @ (' ' | '"' | '/' | '\\') => {
                out.push(e);
                continue;
            }
            'x' => 2,
            'u' => 4,
            'U' => 8,
            _ => return None,
        };
        let hex = chars.as_str().get(..digits)?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        out.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
        chars = chars.as_str().get(digits..)?.chars();
    }
    Some(out)
}
