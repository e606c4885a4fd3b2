//! The agentic DRAM budget in exact decimal arithmetic: the utilization is read from its source
//! text (`0.80`), never through binary floating point (docs/matrix.md, "Agentic DRAM budget").

use infx_yaml::{Node, Value};

/// 3 TB decimal, in MiB: the cap on a runner's available DRAM.
pub(crate) const MAX_AVAILABLE_CPU_DRAM_MIB: i64 = 2_861_022;
const BYTES_PER_MIB: i128 = 1024 * 1024;
const BYTES_PER_GB: i128 = 1_000_000_000;

/// A decimal literal as `mantissa × 10^-scale`.
pub(crate) fn parse_decimal(text: &str) -> Option<(i128, u32)> {
    let t = text.trim();
    let (t, neg) = match t.strip_prefix('-') {
        Some(r) => (r, true),
        None => (t.strip_prefix('+').unwrap_or(t), false),
    };
    let (num, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (int_part, frac_part) = num.split_once('.').unwrap_or((num, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part
        .chars()
        .chain(frac_part.chars())
        .all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let mut mantissa: i128 = 0;
    for c in int_part.chars().chain(frac_part.chars()) {
        mantissa = mantissa
            .checked_mul(10)?
            .checked_add(i128::from(c.to_digit(10)?))?;
    }
    let mut scale = frac_part.len() as i32 - exp;
    while scale < 0 {
        mantissa = mantissa.checked_mul(10)?;
        scale += 1;
    }
    Some((
        if neg { -mantissa } else { mantissa },
        u32::try_from(scale).ok()?,
    ))
}

/// `int(Decimal(min(avail, cap)) * 2^20 * U * gpus / gpus_per_node / 10^9)`.
pub(crate) fn dram_budget_gb(
    available_mib: i64,
    utilization: &Node,
    gpus: i64,
    gpus_per_node: i64,
) -> Result<i64, String> {
    let (m, scale) = match &utilization.value {
        Value::Int(i) => (i128::from(*i), 0),
        Value::Float(f) => parse_decimal(&f.text)
            .ok_or_else(|| format!("dram-utilization '{}' is not a decimal number", f.text))?,
        Value::Str(s) => parse_decimal(s)
            .ok_or_else(|| format!("dram-utilization '{s}' is not a decimal number"))?,
        other => {
            return Err(format!(
                "dram-utilization must be a number, not {}",
                other.type_name()
            ));
        }
    };
    if gpus_per_node == 0 {
        return Err("gpus-per-node must not be 0".into());
    }
    let overflow = || "DRAM budget overflows exact arithmetic".to_string();
    let available = i128::from(available_mib.min(MAX_AVAILABLE_CPU_DRAM_MIB));
    let num = available
        .checked_mul(BYTES_PER_MIB)
        .and_then(|v| v.checked_mul(m))
        .and_then(|v| v.checked_mul(i128::from(gpus)))
        .ok_or_else(overflow)?;
    let den = 10i128
        .checked_pow(scale)
        .and_then(|v| v.checked_mul(i128::from(gpus_per_node)))
        .and_then(|v| v.checked_mul(BYTES_PER_GB))
        .ok_or_else(overflow)?;
    // int() truncates toward zero, as i128 division does.
    i64::try_from(num / den).map_err(|_| overflow())
}

#[cfg(test)]
mod tests {
    use super::*;
    use infx_yaml::parse_str;
    use std::path::Path;

    fn util(text: &str) -> Node {
        match parse_str(Path::new("t.yaml"), &format!("u: {text}\n")) {
            Ok(n) => n
                .get("u")
                .cloned()
                .unwrap_or_else(|| Node::new(Value::Null, n.span)),
            Err(d) => panic!("{}", d.message),
        }
    }

    #[test]
    fn worked_examples_from_the_spec() {
        // available 2 964 436 MiB is capped to 2 861 022; U = 0.80; G = 8.
        assert_eq!(dram_budget_gb(2_964_436, &util("0.80"), 4, 8), Ok(1199));
        assert_eq!(dram_budget_gb(2_964_436, &util("0.80"), 8, 8), Ok(2399));
    }

    #[test]
    fn decimal_text_is_exact() {
        assert_eq!(parse_decimal("0.80"), Some((80, 2)));
        assert_eq!(parse_decimal("8e-1"), Some((8, 1)));
        assert_eq!(parse_decimal(".5"), Some((5, 1)));
        assert_eq!(parse_decimal("1E2"), Some((100, 0)));
        assert_eq!(parse_decimal(".inf"), None);
        // 9537 MiB × 0.7 = 7.0002 GB.
        assert_eq!(dram_budget_gb(9537, &util("0.7"), 1, 1), Ok(7));
        assert_eq!(dram_budget_gb(1, &util("1"), 1, 1), Ok(0));
    }
}
