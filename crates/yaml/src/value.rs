//! The tree: nodes with spans, values with PyYAML's types, order-preserving mappings.

use crate::Span;
use indexmap::IndexMap;
use std::hash::{Hash, Hasher};

/// How a node was written. Lets checks tell `no` from `"no"`, or a plain date from a quoted one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
    /// Sequences and mappings.
    Collection,
}

/// A float with the exact text it was written as, so decimal arithmetic never goes through
/// binary floating point (`0.80` stays `0.80`).
#[derive(Debug, Clone)]
pub struct Float {
    pub value: f64,
    /// Source text with `_` removed (e.g. `0.80`, `-.inf`). A boxed `str`, not a `String`: the
    /// text never grows, and the 8 bytes saved keep [`Value`] at 32 (docs/performance.md).
    pub text: Box<str>,
}

impl PartialEq for Float {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(Float),
    Str(String),
    /// A YAML 1.1 timestamp (`2026-08-01`); kept as its text. PyYAML makes a date/datetime.
    Timestamp(String),
    Seq(Vec<Node>),
    Map(Mapping),
}

impl Value {
    /// Python-ish type name for messages ("int", "str", "dict", …).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Timestamp(_) => "date",
            Value::Seq(_) => "list",
            Value::Map(_) => "dict",
        }
    }
}

/// A value plus where it was written.
#[derive(Debug, Clone)]
pub struct Node {
    pub value: Value,
    pub span: Span,
    pub style: ScalarStyle,
}

impl PartialEq for Node {
    /// Structural equality of values; spans and styles are ignored.
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl Node {
    pub fn new(value: Value, span: Span) -> Self {
        Node {
            value,
            span,
            style: ScalarStyle::Plain,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    /// Native YAML int (bools are not ints here, unlike Python).
    pub fn as_i64(&self) -> Option<i64> {
        match self.value {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self.value {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match &self.value {
            Value::Float(f) => Some(f.value),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
    pub fn as_map(&self) -> Option<&Mapping> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }
    pub fn as_map_mut(&mut self) -> Option<&mut Mapping> {
        match &mut self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }
    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }
    /// Looks up a string key when this node is a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?.get(key)
    }
    /// Follows a path of string keys through nested mappings.
    pub fn get_path(&self, path: &[&str]) -> Option<&Node> {
        path.iter().try_fold(self, |n, k| n.get(k))
    }
    /// Number of nodes in this subtree (for the alias budget).
    pub fn count(&self) -> usize {
        1 + match &self.value {
            Value::Seq(items) => items.iter().map(Node::count).sum(),
            Value::Map(m) => m.iter_nodes().map(|(k, v)| k.count() + v.count()).sum(),
            _ => 0,
        }
    }
}

/// The identity of a mapping key with Python dict semantics for the common cases (`1`, `1.0`
/// and `true` are the same key in a Python dict), borrowed from the key node. Collections have
/// none: they cannot be dict keys in Python, and the loader reports them before a mapping is
/// built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum KeyRef<'a> {
    Null,
    Int(i64),
    Float(u64),
    Str(&'a str),
    Timestamp(&'a str),
}

impl<'a> KeyRef<'a> {
    pub(crate) fn of(value: &'a Value) -> Option<KeyRef<'a>> {
        Some(match value {
            Value::Null => KeyRef::Null,
            Value::Bool(b) => KeyRef::Int(*b as i64),
            Value::Int(i) => KeyRef::Int(*i),
            Value::Float(f) if f.value.fract() == 0.0 && f.value.abs() < 9.0e15 => {
                KeyRef::Int(f.value as i64)
            }
            Value::Float(f) => KeyRef::Float(f.value.to_bits()),
            Value::Str(s) => KeyRef::Str(s),
            Value::Timestamp(t) => KeyRef::Timestamp(t),
            Value::Seq(_) | Value::Map(_) => return None,
        })
    }
}

/// An owned [`KeyRef`], for the position index of long mappings.
#[derive(Debug, Clone)]
enum KeyRepr {
    Null,
    Int(i64),
    Float(u64),
    Str(String),
    Timestamp(String),
}

impl KeyRepr {
    fn of(key: KeyRef<'_>) -> KeyRepr {
        match key {
            KeyRef::Null => KeyRepr::Null,
            KeyRef::Int(i) => KeyRepr::Int(i),
            KeyRef::Float(f) => KeyRepr::Float(f),
            KeyRef::Str(s) => KeyRepr::Str(s.to_string()),
            KeyRef::Timestamp(t) => KeyRepr::Timestamp(t.to_string()),
        }
    }
    fn as_key_ref(&self) -> KeyRef<'_> {
        match self {
            KeyRepr::Null => KeyRef::Null,
            KeyRepr::Int(i) => KeyRef::Int(*i),
            KeyRepr::Float(f) => KeyRef::Float(*f),
            KeyRepr::Str(s) => KeyRef::Str(s),
            KeyRepr::Timestamp(t) => KeyRef::Timestamp(t),
        }
    }
}

impl PartialEq for KeyRepr {
    fn eq(&self, other: &Self) -> bool {
        self.as_key_ref() == other.as_key_ref()
    }
}
impl Eq for KeyRepr {}

impl Hash for KeyRepr {
    /// Hashes exactly like the borrowed form, so lookups by [`KeyRef`] need no allocation.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_key_ref().hash(state);
    }
}

impl indexmap::Equivalent<KeyRepr> for KeyRef<'_> {
    fn equivalent(&self, key: &KeyRepr) -> bool {
        *self == key.as_key_ref()
    }
}

/// Mappings up to this many entries are searched in order; longer ones get a position index.
/// Nearly every mapping in configs and recipes is this short, and a scan of a few keys costs
/// less than hashing them, and far less than building an index for every entry's mapping
/// (from 9 entries it was: the loader 2.5 % slower; docs/performance.md).
const INDEXED_FROM: usize = 32;

/// An order-preserving mapping (insertion order = order written, merged keys first, as
/// PyYAML builds the dict).
#[derive(Debug, Clone, Default)]
pub struct Mapping {
    pairs: Vec<(Node, Node)>,
    /// Position in `pairs` of each key, once the mapping has [`INDEXED_FROM`] entries.
    index: Option<Box<IndexMap<KeyRepr, usize>>>,
}

impl PartialEq for Mapping {
    /// Dict equality: same keys with equal values, order ignored (as in Python).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self.pairs.iter().all(|(k, v)| {
                other
                    .position_of(k)
                    .and_then(|i| other.pairs.get(i))
                    .is_some_and(|(_, ov)| ov == v)
            })
    }
}

impl Mapping {
    pub fn new() -> Self {
        Self::default()
    }
    /// An empty mapping with room for `n` entries.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Mapping {
            pairs: Vec::with_capacity(n),
            index: None,
        }
    }
    pub fn len(&self) -> usize {
        self.pairs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
    /// Where the key `key` is, if present.
    fn position(&self, key: KeyRef<'_>) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(&key).copied(),
            // A string key (nearly every lookup) can only equal a string key: compared
            // directly, without each key's dict identity worked out.
            None if let KeyRef::Str(s) = key => self
                .pairs
                .iter()
                .position(|(k, _)| matches!(&k.value, Value::Str(t) if t == s)),
            None => self
                .pairs
                .iter()
                .position(|(k, _)| KeyRef::of(&k.value) == Some(key)),
        }
    }
    /// Where the key equal to the key node `key` is, if present (never for a collection).
    pub(crate) fn position_of(&self, key: &Node) -> Option<usize> {
        self.position(KeyRef::of(&key.value)?)
    }
    /// The pair at `i` (from [`Self::position_of`]).
    pub(crate) fn pair_mut(&mut self, i: usize) -> Option<&mut (Node, Node)> {
        self.pairs.get_mut(i)
    }
    /// Appends a pair whose key is not in the mapping (checked by the caller).
    pub(crate) fn push_new(&mut self, key: Node, value: Node) {
        let at = self.pairs.len();
        match &mut self.index {
            Some(index) => {
                if let Some(k) = KeyRef::of(&key.value) {
                    index.insert(KeyRepr::of(k), at);
                }
            }
            None if at + 1 >= INDEXED_FROM => {
                let mut index = IndexMap::with_capacity(at + 1);
                let keys = self.pairs.iter().map(|(k, _)| k).chain([&key]);
                for (i, k) in keys.enumerate() {
                    if let Some(k) = KeyRef::of(&k.value) {
                        index.insert(KeyRepr::of(k), i);
                    }
                }
                self.index = Some(Box::new(index));
            }
            None => {}
        }
        self.pairs.push((key, value));
    }
    /// The mapping of `pairs` when no two of their keys are equal (nearly always: the vector
    /// is kept, nothing is moved again); otherwise the pairs, untouched.
    pub(crate) fn from_distinct_pairs(
        mut pairs: Vec<(Node, Node)>,
    ) -> Result<Mapping, Vec<(Node, Node)>> {
        let index = if pairs.len() < INDEXED_FROM {
            let distinct = pairs.iter().enumerate().all(|(i, (k, _))| {
                let key = KeyRef::of(&k.value);
                key.is_none()
                    || !pairs
                        .iter()
                        .take(i)
                        .any(|(p, _)| KeyRef::of(&p.value) == key)
            });
            if !distinct {
                return Err(pairs);
            }
            None
        } else {
            let mut index = IndexMap::with_capacity(pairs.len());
            for (i, (k, _)) in pairs.iter().enumerate() {
                if let Some(k) = KeyRef::of(&k.value)
                    && index.insert(KeyRepr::of(k), i).is_some()
                {
                    return Err(pairs);
                }
            }
            Some(Box::new(index))
        };
        // The vector grew by doubling while the loader filled it; a tree lives long enough
        // for the spare room to matter (peak memory per byte of YAML, docs/performance.md).
        pairs.shrink_to_fit();
        Ok(Mapping { pairs, index })
    }
    /// The pairs, in order, to change in place (spans only: the index follows the keys).
    pub(crate) fn pairs_mut(&mut self) -> impl Iterator<Item = &mut (Node, Node)> {
        self.pairs.iter_mut()
    }
    /// The pairs, in order.
    pub(crate) fn into_pairs(self) -> Vec<(Node, Node)> {
        self.pairs
    }
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.get_entry(key).map(|(_, v)| v)
    }
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        let i = self.position(KeyRef::Str(key))?;
        self.pairs.get_mut(i).map(|(_, v)| v)
    }
    /// The key node and value node for a string key (the key node's span points at the key).
    pub fn get_entry(&self, key: &str) -> Option<(&Node, &Node)> {
        let i = self.position(KeyRef::Str(key))?;
        self.pairs.get(i).map(|(k, v)| (k, v))
    }
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(KeyRef::Str(key)).is_some()
    }
    /// Entries whose key is a string, in order, as `(key, key node, value node)`.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Node, &Node)> {
        self.pairs
            .iter()
            .filter_map(|(k, v)| k.as_str().map(|s| (s, k, v)))
    }
    /// All entries, whatever the key type, in order.
    pub fn iter_nodes(&self) -> impl Iterator<Item = (&Node, &Node)> {
        self.pairs.iter().map(|(k, v)| (k, v))
    }
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.iter().map(|(k, _, _)| k)
    }
    /// Inserts or replaces (keeping the original position on replace, like a Python dict).
    pub fn insert(&mut self, key: Node, value: Node) {
        match self.position_of(&key).and_then(|i| self.pairs.get_mut(i)) {
            Some(slot) => slot.1 = value,
            None => self.push_new(key, value),
        }
    }
    /// Removes a string key, keeping the order of the others.
    pub fn shift_remove(&mut self, key: &str) -> Option<(Node, Node)> {
        let at = self.position(KeyRef::Str(key))?;
        if let Some(index) = &mut self.index {
            index.shift_remove(&KeyRef::Str(key));
            // Later entries move up one place.
            for i in index.values_mut() {
                if *i > at {
                    *i -= 1;
                }
            }
        }
        (at < self.pairs.len()).then(|| self.pairs.remove(at))
    }
}
