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
    /// Source text with `_` removed (e.g. `0.80`, `-.inf`).
    pub text: String,
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

/// Hashable identity of a mapping key with Python dict semantics for the common cases
/// (`1`, `1.0` and `true` are the same key in a Python dict).
#[derive(Debug, Clone)]
pub(crate) enum KeyRepr {
    Null,
    Int(i64),
    Float(u64),
    Str(String),
    Timestamp(String),
    /// Collections cannot be dict keys in Python; the loader reports them before this is used.
    Unhashable(usize),
}

impl KeyRepr {
    pub(crate) fn of(value: &Value, unique: usize) -> KeyRepr {
        match value {
            Value::Null => KeyRepr::Null,
            Value::Bool(b) => KeyRepr::Int(*b as i64),
            Value::Int(i) => KeyRepr::Int(*i),
            Value::Float(f) if f.value.fract() == 0.0 && f.value.abs() < 9.0e15 => {
                KeyRepr::Int(f.value as i64)
            }
            Value::Float(f) => KeyRepr::Float(f.value.to_bits()),
            Value::Str(s) => KeyRepr::Str(s.clone()),
            Value::Timestamp(t) => KeyRepr::Timestamp(t.clone()),
            Value::Seq(_) | Value::Map(_) => KeyRepr::Unhashable(unique),
        }
    }
}

impl PartialEq for KeyRepr {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (KeyRepr::Null, KeyRepr::Null) => true,
            (KeyRepr::Int(a), KeyRepr::Int(b)) => a == b,
            (KeyRepr::Float(a), KeyRepr::Float(b)) => a == b,
            (KeyRepr::Str(a), KeyRepr::Str(b)) => a == b,
            (KeyRepr::Timestamp(a), KeyRepr::Timestamp(b)) => a == b,
            (KeyRepr::Unhashable(a), KeyRepr::Unhashable(b)) => a == b,
            _ => false,
        }
    }
}
impl Eq for KeyRepr {}

impl Hash for KeyRepr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            // Strings hash exactly like `StrKey` below so `get(&str)` needs no allocation.
            KeyRepr::Str(s) => {
                0u8.hash(state);
                s.as_str().hash(state);
            }
            KeyRepr::Null => 1u8.hash(state),
            KeyRepr::Int(i) => {
                2u8.hash(state);
                i.hash(state);
            }
            KeyRepr::Float(f) => {
                3u8.hash(state);
                f.hash(state);
            }
            KeyRepr::Timestamp(t) => {
                4u8.hash(state);
                t.hash(state);
            }
            KeyRepr::Unhashable(u) => {
                5u8.hash(state);
                u.hash(state);
            }
        }
    }
}

struct StrKey<'a>(&'a str);

impl Hash for StrKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        0u8.hash(state);
        self.0.hash(state);
    }
}

impl indexmap::Equivalent<KeyRepr> for StrKey<'_> {
    fn equivalent(&self, key: &KeyRepr) -> bool {
        matches!(key, KeyRepr::Str(s) if s == self.0)
    }
}

/// An order-preserving mapping (insertion order = order written, merged keys first, as
/// PyYAML builds the dict).
#[derive(Debug, Clone, Default)]
pub struct Mapping {
    pub(crate) entries: IndexMap<KeyRepr, (Node, Node)>,
}

impl PartialEq for Mapping {
    /// Dict equality: same keys with equal values, order ignored (as in Python).
    fn eq(&self, other: &Self) -> bool {
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .all(|(k, (_, v))| other.entries.get(k).is_some_and(|(_, ov)| ov == v))
    }
}

impl Mapping {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entries.get(&StrKey(key)).map(|(_, v)| v)
    }
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.entries.get_mut(&StrKey(key)).map(|(_, v)| v)
    }
    /// The key node and value node for a string key (the key node's span points at the key).
    pub fn get_entry(&self, key: &str) -> Option<(&Node, &Node)> {
        self.entries.get(&StrKey(key)).map(|(k, v)| (k, v))
    }
    pub fn contains_key(&self, key: &str) -> bool {
        self.entries.contains_key(&StrKey(key))
    }
    /// Entries whose key is a string, in order, as `(key, key node, value node)`.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Node, &Node)> {
        self.entries
            .values()
            .filter_map(|(k, v)| k.as_str().map(|s| (s, k, v)))
    }
    /// All entries, whatever the key type, in order.
    pub fn iter_nodes(&self) -> impl Iterator<Item = (&Node, &Node)> {
        self.entries.values().map(|(k, v)| (k, v))
    }
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.iter().map(|(k, _, _)| k)
    }
    /// Inserts or replaces (keeping the original position on replace, like a Python dict).
    pub fn insert(&mut self, key: Node, value: Node) {
        let repr = KeyRepr::of(&key.value, self.entries.len());
        match self.entries.get_mut(&repr) {
            Some(slot) => slot.1 = value,
            None => {
                self.entries.insert(repr, (key, value));
            }
        }
    }
    /// Removes a string key, keeping the order of the others.
    pub fn shift_remove(&mut self, key: &str) -> Option<(Node, Node)> {
        self.entries.shift_remove(&StrKey(key))
    }
}
