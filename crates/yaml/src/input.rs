//! The parser's input: saphyr-parser's own `&str` input with a shorter look-ahead window.
//!
//! The scanner reserves the window's length in every plain scalar's string once its first
//! character is read. `StrInput`'s window is 128 characters, so each plain scalar's
//! `String::with_capacity(32)` was reallocated to about 160 bytes, and the node kept them:
//! a realloc per scalar and five times the memory (docs/performance.md, "A shorter
//! look-ahead"). A window of [`WINDOW`] characters keeps a short scalar in its first 32
//! bytes. The window only sizes the scanner's batches (the `&str` input has the whole text
//! at hand), so what it parses is the same.

use saphyr_parser::StrInput;
use saphyr_parser::input::{Input, SkipTabs};

/// Characters the scanner may ask for at once: the most with which an ASCII first character
/// plus the window's reservation fit a new scalar's 32 bytes. 16, saphyr's buffered input's
/// window, parsed the same and ran 3 % slower here (docs/performance.md).
const WINDOW: usize = 31;

/// [`StrInput`] with a [`WINDOW`]-character look-ahead; every other method is its own.
#[derive(Clone, Copy)]
pub(crate) struct TextInput<'a>(StrInput<'a>);

impl<'a> TextInput<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        TextInput(StrInput::new(text))
    }
}

impl Input for TextInput<'_> {
    #[inline]
    fn lookahead(&mut self, count: usize) {
        self.0.lookahead(count)
    }
    #[inline]
    fn buflen(&self) -> usize {
        self.0.buflen()
    }
    #[inline]
    fn bufmaxlen(&self) -> usize {
        WINDOW
    }
    #[inline]
    fn buf_is_empty(&self) -> bool {
        self.0.buf_is_empty()
    }
    #[inline]
    fn raw_read_ch(&mut self) -> char {
        self.0.raw_read_ch()
    }
    #[inline]
    fn raw_read_non_breakz_ch(&mut self) -> Option<char> {
        self.0.raw_read_non_breakz_ch()
    }
    #[inline]
    fn skip(&mut self) {
        self.0.skip()
    }
    #[inline]
    fn skip_n(&mut self, count: usize) {
        self.0.skip_n(count)
    }
    #[inline]
    fn peek(&self) -> char {
        self.0.peek()
    }
    #[inline]
    fn peek_nth(&self, n: usize) -> char {
        self.0.peek_nth(n)
    }
    #[inline]
    fn peek_opt(&self) -> Option<char> {
        self.0.peek_opt()
    }
    #[inline]
    fn look_ch(&mut self) -> char {
        self.0.look_ch()
    }
    #[inline]
    fn next_char_is(&self, c: char) -> bool {
        self.0.next_char_is(c)
    }
    #[inline]
    fn nth_char_is(&self, n: usize, c: char) -> bool {
        self.0.nth_char_is(n, c)
    }
    #[inline]
    fn next_2_are(&self, c1: char, c2: char) -> bool {
        self.0.next_2_are(c1, c2)
    }
    #[inline]
    fn next_3_are(&self, c1: char, c2: char, c3: char) -> bool {
        self.0.next_3_are(c1, c2, c3)
    }
    #[inline]
    fn next_is_document_indicator(&self) -> bool {
        self.0.next_is_document_indicator()
    }
    #[inline]
    fn next_is_document_start(&self) -> bool {
        self.0.next_is_document_start()
    }
    #[inline]
    fn next_is_document_end(&self) -> bool {
        self.0.next_is_document_end()
    }
    #[inline]
    fn skip_ws_to_eol(&mut self, skip_tabs: SkipTabs) -> (usize, Result<SkipTabs, &'static str>) {
        self.0.skip_ws_to_eol(skip_tabs)
    }
    #[inline]
    fn next_can_be_plain_scalar(&self, in_flow: bool) -> bool {
        self.0.next_can_be_plain_scalar(in_flow)
    }
    #[inline]
    fn next_is_blank_or_break(&self) -> bool {
        self.0.next_is_blank_or_break()
    }
    #[inline]
    fn next_is_blank_or_breakz(&self) -> bool {
        self.0.next_is_blank_or_breakz()
    }
    #[inline]
    fn next_is_blank(&self) -> bool {
        self.0.next_is_blank()
    }
    #[inline]
    fn next_is_break(&self) -> bool {
        self.0.next_is_break()
    }
    #[inline]
    fn next_is_breakz(&self) -> bool {
        self.0.next_is_breakz()
    }
    #[inline]
    fn next_is_z(&self) -> bool {
        self.0.next_is_z()
    }
    #[inline]
    fn next_is_flow(&self) -> bool {
        self.0.next_is_flow()
    }
    #[inline]
    fn next_is_digit(&self) -> bool {
        self.0.next_is_digit()
    }
    #[inline]
    fn next_is_alpha(&self) -> bool {
        self.0.next_is_alpha()
    }
    #[inline]
    fn skip_while_non_breakz(&mut self) -> usize {
        self.0.skip_while_non_breakz()
    }
    #[inline]
    fn skip_while_blank(&mut self) -> usize {
        self.0.skip_while_blank()
    }
    #[inline]
    fn fetch_while_is_alpha(&mut self, out: &mut String) -> usize {
        self.0.fetch_while_is_alpha(out)
    }
    #[inline]
    fn fetch_while_is_yaml_non_space(&mut self, out: &mut String) -> usize {
        self.0.fetch_while_is_yaml_non_space(out)
    }
}
