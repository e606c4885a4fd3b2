//! Transitional: lets call sites that still write codes as string literals build while the
//! call-site rewrite (string literal → registry constant) is applied. Removed once no call site
//! needs it; nothing may depend on it.

use crate::{Code, Severity};

impl From<&'static str> for Code {
    fn from(name: &'static str) -> Code {
        Code::new(name, Severity::Error, "a finding of infx validate")
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Code> for &str {
    fn eq(&self, other: &Code) -> bool {
        *self == other.as_str()
    }
}
