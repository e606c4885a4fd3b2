//! YAML 1.1 plain-scalar resolution exactly as PyYAML's `SafeLoader` does it (its implicit
//! resolvers for bool, float, int, null, timestamp and merge), and the matching constructors.
//! Hand-written matchers instead of a regex engine: the patterns are small and fixed.

/// What a plain scalar resolves to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Resolved {
    Null,
    Bool(bool),
    Int(Result<i64, ()>),
    Float(f64),
    Timestamp,
    Merge,
    /// The `=` "value" tag: PyYAML's safe constructor has no constructor for it.
    ValueTag,
    Str,
}

pub(crate) fn resolve_plain(s: &str) -> Resolved {
    if let Some(i) = small_decimal(s) {
        return Resolved::Int(Ok(i));
    }
    let Some(first) = s.chars().next() else {
        return Resolved::Null;
    };
    match first {
        'y' | 'Y' | 'n' | 'N' | 't' | 'T' | 'f' | 'F' | 'o' | 'O' => {
            if let Some(b) = bool_value(s) {
                return Resolved::Bool(b);
            }
        }
        _ => {}
    }
    if matches!(first, '-' | '+' | '0'..='9' | '.') && is_float(s) {
        return Resolved::Float(float_value(s));
    }
    if matches!(first, '-' | '+' | '0'..='9') && is_int(s) {
        return Resolved::Int(int_value(s));
    }
    if s == "<<" {
        return Resolved::Merge;
    }
    if matches!(s, "~" | "null" | "Null" | "NULL") {
        return Resolved::Null;
    }
    if first.is_ascii_digit() && is_timestamp(s) {
        return Resolved::Timestamp;
    }
    if s == "=" {
        return Resolved::ValueTag;
    }
    Resolved::Str
}

/// The common number, digits only without a leading zero (or `0` itself) and short enough for
/// an i64, read in one pass: through the float, int and value steps it cost ~500 instructions
/// (docs/performance.md, "A shorter look-ahead"). Its int reading is the one those steps give.
fn small_decimal(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let (&first, _) = b.split_first()?;
    if b.len() > 18 || !first.is_ascii_digit() || (first == b'0' && b.len() > 1) {
        return None;
    }
    b.iter().try_fold(0i64, |acc, &d| {
        d.is_ascii_digit().then(|| acc * 10 + i64::from(d - b'0'))
    })
}

pub(crate) fn bool_value(s: &str) -> Option<bool> {
    match s {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

fn strip_sign(s: &str) -> (bool, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

fn all(s: &str, f: impl Fn(u8) -> bool) -> bool {
    s.bytes().all(f)
}

/// `[-+]?0b[0-1_]+ | [-+]?0[0-7_]+ | [-+]?(?:0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+
///  | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+`
pub(crate) fn is_int(s: &str) -> bool {
    let (_, body) = strip_sign(s);
    if let Some(bin) = body.strip_prefix("0b") {
        return !bin.is_empty() && all(bin, |b| matches!(b, b'0' | b'1' | b'_'));
    }
    if let Some(hex) = body.strip_prefix("0x") {
        return !hex.is_empty() && all(hex, |b| b.is_ascii_hexdigit() || b == b'_');
    }
    if let Some(oct) = body.strip_prefix('0') {
        return oct.is_empty() || all(oct, |b| matches!(b, b'0'..=b'7' | b'_'));
    }
    let bytes = body.as_bytes();
    if bytes.is_empty() || !matches!(bytes[0], b'1'..=b'9') {
        return false;
    }
    let mut parts = body.split(':');
    let head = parts.next().unwrap_or("");
    if !all(head, |b| b.is_ascii_digit() || b == b'_') {
        return false;
    }
    parts.all(is_sexagesimal_part)
}

fn is_sexagesimal_part(p: &str) -> bool {
    let b = p.as_bytes();
    match b.len() {
        1 => b[0].is_ascii_digit(),
        2 => matches!(b[0], b'0'..=b'5') && b[1].is_ascii_digit(),
        _ => false,
    }
}

/// PyYAML `construct_yaml_int`. `Err` when the value does not fit an i64.
pub(crate) fn int_value(s: &str) -> Result<i64, ()> {
    let cleaned = without_underscores(s);
    let (neg, body) = strip_sign(&cleaned);
    let magnitude: i128 = if body == "0" {
        0
    } else if let Some(bin) = body.strip_prefix("0b") {
        i128::from_str_radix(bin, 2).map_err(|_| ())?
    } else if let Some(hex) = body.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).map_err(|_| ())?
    } else if body.starts_with('0') {
        i128::from_str_radix(body, 8).map_err(|_| ())?
    } else if body.contains(':') {
        let mut value: i128 = 0;
        for part in body.split(':') {
            let digit: i128 = part.parse().map_err(|_| ())?;
            value = value
                .checked_mul(60)
                .and_then(|v| v.checked_add(digit))
                .ok_or(())?;
        }
        value
    } else {
        body.parse::<i128>().map_err(|_| ())?
    };
    let signed = if neg { -magnitude } else { magnitude };
    i64::try_from(signed).map_err(|_| ())
}

/// `[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)? | \.[0-9_]+(?:[eE][-+][0-9]+)?
///  | [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)`
pub(crate) fn is_float(s: &str) -> bool {
    if matches!(s, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    let (_, body) = strip_sign(s);
    if matches!(body, ".inf" | ".Inf" | ".INF") {
        return true;
    }
    let signed = body.len() != s.len();
    // Split off an exponent `[eE][-+][0-9]+`.
    let (mantissa, exp_ok) = match body.find(['e', 'E']) {
        Some(i) => {
            let exp = &body[i + 1..];
            let ok = exp.len() >= 2
                && matches!(exp.as_bytes()[0], b'-' | b'+')
                && all(&exp[1..], |b| b.is_ascii_digit());
            (&body[..i], Some(ok))
        }
        None => (body, None),
    };
    if exp_ok == Some(false) {
        return false;
    }
    let Some(dot) = mantissa.find('.') else {
        return false;
    };
    let (int_part, frac) = (&mantissa[..dot], &mantissa[dot + 1..]);
    if !all(frac, |b| b.is_ascii_digit() || b == b'_') {
        return false;
    }
    if int_part.is_empty() {
        // `\.[0-9_]+…`: no sign allowed, at least one fraction character.
        return !signed && !frac.is_empty();
    }
    if int_part.contains(':') {
        // Sexagesimal float: no exponent allowed.
        if exp_ok.is_some() {
            return false;
        }
        let mut parts = int_part.split(':');
        let head = parts.next().unwrap_or("");
        return !head.is_empty()
            && head.as_bytes()[0].is_ascii_digit()
            && all(head, |b| b.is_ascii_digit() || b == b'_')
            && parts.all(is_sexagesimal_part);
    }
    int_part.as_bytes()[0].is_ascii_digit() && all(int_part, |b| b.is_ascii_digit() || b == b'_')
}

/// PyYAML `construct_yaml_float`.
pub(crate) fn float_value(s: &str) -> f64 {
    let cleaned = without_underscores(s);
    let (neg, body) = strip_sign(&cleaned);
    let sign = if neg { -1.0 } else { 1.0 };
    // PyYAML lowercases the text first; only these two words and the exponent's `E` have
    // letters, and Rust's float parser reads `E` as `e`.
    if body.eq_ignore_ascii_case(".inf") {
        return sign * f64::INFINITY;
    }
    if body.eq_ignore_ascii_case(".nan") {
        return f64::NAN;
    }
    if body.contains(':') {
        let mut value = 0.0;
        for part in body.split(':') {
            value = value * 60.0 + part.parse::<f64>().unwrap_or(0.0);
        }
        return sign * value;
    }
    // Rust's parser rejects a trailing `.` followed by nothing but accepts "1." — both fine;
    // a bare "." cannot reach here (is_float requires a digit).
    sign * body.parse::<f64>().unwrap_or(0.0)
}

/// `s` with every `_` removed (PyYAML's int and float constructors do this first), copied only
/// when it has one.
pub(crate) fn without_underscores(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('_') {
        std::borrow::Cow::Owned(s.replace('_', ""))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// PyYAML's timestamp pattern: `YYYY-MM-DD`, or `YYYY-M-D` followed by a time part.
pub(crate) fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    if b.len() == 10
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
    {
        return true;
    }
    // Long form: YYYY-M?M-D?D(T|t|[ \t]+)H?H:MM:SS(.f*)?([ \t]*(Z|[-+]H?H(:MM)?))?
    let mut i = 0;
    let take_digits = |i: &mut usize, min: usize, max: usize| -> bool {
        let start = *i;
        while *i < b.len() && *i - start < max && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start >= min
    };
    let expect = |i: &mut usize, c: u8| -> bool {
        if b.get(*i) == Some(&c) {
            *i += 1;
            true
        } else {
            false
        }
    };
    if !(take_digits(&mut i, 4, 4) && expect(&mut i, b'-') && take_digits(&mut i, 1, 2)) {
        return false;
    }
    if !(expect(&mut i, b'-') && take_digits(&mut i, 1, 2)) {
        return false;
    }
    if matches!(b.get(i), Some(b'T' | b't')) {
        i += 1;
    } else {
        let start = i;
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    if !(take_digits(&mut i, 1, 2) && expect(&mut i, b':') && take_digits(&mut i, 2, 2)) {
        return false;
    }
    if !(expect(&mut i, b':') && take_digits(&mut i, 2, 2)) {
        return false;
    }
    if expect(&mut i, b'.') {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if i == b.len() {
        return true;
    }
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    if expect(&mut i, b'Z') {
        return i == b.len();
    }
    if matches!(b.get(i), Some(b'-' | b'+')) {
        i += 1;
        if !take_digits(&mut i, 1, 2) {
            return false;
        }
        if expect(&mut i, b':') && !take_digits(&mut i, 2, 2) {
            return false;
        }
        return i == b.len();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The short cut reads a number only where the float, int and value steps read the
        /// same int, and leaves every other text to them.
        #[test]
        fn small_decimal_agrees_with_the_full_steps(s in "[-+]?[0-9_]{0,21}|[0-9]{1,20}") {
            if let Some(i) = small_decimal(&s) {
                prop_assert!(!is_float(&s));
                prop_assert!(is_int(&s));
                prop_assert_eq!(int_value(&s), Ok(i));
            } else {
                let fits = s.len() <= 18 && !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
                    && (s == "0" || !s.starts_with('0'));
                prop_assert!(!fits, "{s} should have been read");
            }
        }
    }

    #[test]
    fn pyyaml_ints() {
        assert_eq!(resolve_plain("1_998_848"), Resolved::Int(Ok(1998848)));
        assert_eq!(resolve_plain("010"), Resolved::Int(Ok(8)));
        assert_eq!(resolve_plain("0x1F"), Resolved::Int(Ok(31)));
        assert_eq!(resolve_plain("0b101"), Resolved::Int(Ok(5)));
        assert_eq!(resolve_plain("1:30"), Resolved::Int(Ok(90)));
        assert_eq!(resolve_plain("-7"), Resolved::Int(Ok(-7)));
        assert_eq!(resolve_plain("08"), Resolved::Str);
        assert_eq!(resolve_plain("1:60"), Resolved::Str);
    }

    #[test]
    fn pyyaml_floats() {
        assert_eq!(resolve_plain("0.80"), Resolved::Float(0.8));
        assert_eq!(resolve_plain("1."), Resolved::Float(1.0));
        assert_eq!(resolve_plain(".5"), Resolved::Float(0.5));
        assert_eq!(resolve_plain("1.0e+3"), Resolved::Float(1000.0));
        // PyYAML quirks: no dot → not a float; exponent needs a sign.
        assert_eq!(resolve_plain("1e5"), Resolved::Str);
        assert_eq!(resolve_plain("1.0e5"), Resolved::Str);
        assert_eq!(resolve_plain("-.inf"), Resolved::Float(f64::NEG_INFINITY));
        assert_eq!(resolve_plain("1:30.5"), Resolved::Float(90.5));
        assert_eq!(resolve_plain("+.5"), Resolved::Str);
    }

    #[test]
    fn pyyaml_bools_nulls_and_others() {
        for t in ["yes", "Yes", "on", "ON", "true", "True"] {
            assert_eq!(resolve_plain(t), Resolved::Bool(true), "{t}");
        }
        for f in ["no", "NO", "off", "false"] {
            assert_eq!(resolve_plain(f), Resolved::Bool(false), "{f}");
        }
        // y/n are not booleans in PyYAML (its resolver omits them).
        assert_eq!(resolve_plain("y"), Resolved::Str);
        assert_eq!(resolve_plain("n"), Resolved::Str);
        assert_eq!(resolve_plain("yEs"), Resolved::Str);
        for n in ["", "~", "null", "Null", "NULL"] {
            assert_eq!(resolve_plain(n), Resolved::Null);
        }
        assert_eq!(resolve_plain("nULL"), Resolved::Str);
        assert_eq!(resolve_plain("<<"), Resolved::Merge);
        assert_eq!(resolve_plain("2026-08-01"), Resolved::Timestamp);
        assert_eq!(resolve_plain("2026-8-1 10:00:00"), Resolved::Timestamp);
        assert_eq!(resolve_plain("2026-8-1"), Resolved::Str);
        assert_eq!(
            resolve_plain("2001-12-14t21:59:43.10-05:00"),
            Resolved::Timestamp
        );
        assert_eq!(resolve_plain("8k1k"), Resolved::Str);
        assert_eq!(resolve_plain("sglang:"), Resolved::Str);
    }
}
