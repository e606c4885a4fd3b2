//! Upstream's output-row checks (`validate_matrix_entry`, `validate_agentic_matrix_entry`):
//! every generated row is validated against the model of its kind before it is kept, so a
//! value that only arises while expanding (e.g. a negative `total-cpu-dram-gb` on a
//! DRAM-offload row) fails the run as upstream's does (docs/matrix.md, "Output-row checks").
//!
//! Field types, constraints and the model validators are checked; unknown keys are not (the
//! October generator adds keys the August models do not know, and every key infx writes is one
//! of the generator's own).

use crate::json::{Json, Object};

/// The four row models of upstream's `validation.py`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowModel {
    SingleNode,
    MultiNode,
    SingleNodeAgentic,
    MultiNodeAgentic,
}

impl RowModel {
    /// The model upstream picks: agentic rows carry `scenario-type`; multinode rows `prefill`.
    pub(crate) fn of(row: &Object) -> RowModel {
        let multinode = row.contains("prefill");
        match (row.contains("scenario-type"), multinode) {
            (true, true) => RowModel::MultiNodeAgentic,
            (true, false) => RowModel::SingleNodeAgentic,
            (false, true) => RowModel::MultiNode,
            (false, false) => RowModel::SingleNode,
        }
    }

    fn class_name(self) -> &'static str {
        match self {
            RowModel::SingleNode => "SingleNodeMatrixEntry",
            RowModel::MultiNode => "MultiNodeMatrixEntry",
            RowModel::SingleNodeAgentic => "SingleNodeAgenticMatrixEntry",
            RowModel::MultiNodeAgentic => "MultiNodeAgenticMatrixEntry",
        }
    }

    fn agentic(self) -> bool {
        matches!(
            self,
            RowModel::SingleNodeAgentic | RowModel::MultiNodeAgentic
        )
    }
}

/// One failed field: its location (`prefill.pp`) and pydantic's wording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RowError {
    pub location: String,
    pub message: String,
}

/// Pydantic's error for a disaggregated row without `kv-p2p-transfer`.
const KV_P2P_REQUIRED: &str = "Value error, disagg=true requires kv-p2p-transfer";

/// Checks one generated row; `Err` holds upstream's message (first line identical:
/// "The following parsed [agentic ]matrix entry failed validation:").
#[cfg(test)]
pub(crate) fn check_row(row: &Object) -> Result<(), String> {
    check_row_of_day(row, true)
}

/// [`check_row`] for a tree of its day: without #2096's KV metadata (`kv_metadata` false) a
/// disaggregated row needs no `kv-p2p-transfer` (docs/config.md, "Rules carry their day").
pub(crate) fn check_row_of_day(row: &Object, kv_metadata: bool) -> Result<(), String> {
    let model = RowModel::of(row);
    let mut errors = row_errors(row, model);
    if !kv_metadata {
        errors.retain(|e| e.message != KV_P2P_REQUIRED);
    }
    if errors.is_empty() {
        return Ok(());
    }
    let kind = if model.agentic() {
        "agentic matrix entry"
    } else {
        "matrix entry"
    };
    let mut msg = format!(
        "The following parsed {kind} failed validation:\n{}\n{} validation error{} for {}",
        Json::Object(row.clone()).to_python(),
        errors.len(),
        if errors.len() == 1 { "" } else { "s" },
        model.class_name()
    );
    for e in &errors {
        msg.push_str(&format!("\n{}\n  {}", e.location, e.message));
    }
    Err(msg)
}

/// Every field error of `row` under `model` (pydantic reports them all, in field order).
pub(crate) fn row_errors(row: &Object, model: RowModel) -> Vec<RowError> {
    let mut errs = Vec::new();
    let mut check = |loc: &str, v: Option<&Json>, kind: Kind| {
        if let Some(message) = field_error(v, kind) {
            errs.push(RowError {
                location: loc.to_string(),
                message,
            });
        }
    };
    for k in ["image", "model", "model-prefix", "precision", "framework"] {
        check(k, row.get(k), Kind::Str);
    }
    let spec = Kind::Literal(&["mtp", "draft_model", "none"]);
    let spec_default = model == RowModel::SingleNodeAgentic;
    if !(spec_default && row.get("spec-decoding").is_none()) {
        check("spec-decoding", row.get("spec-decoding"), spec);
    }
    check("runner", row.get("runner"), Kind::Str);
    match model {
        RowModel::SingleNode | RowModel::MultiNode => {
            check("isl", row.get("isl"), Kind::Int);
            check("osl", row.get("osl"), Kind::Int);
        }
        _ => {}
    }
    let single = matches!(model, RowModel::SingleNode | RowModel::SingleNodeAgentic);
    if single {
        check("tp", row.get("tp"), Kind::Int);
        check("pp", row.get("pp"), Kind::StrictPositive);
        check("dcp-size", row.get("dcp-size"), Kind::StrictPositive);
        check("pcp-size", row.get("pcp-size"), Kind::StrictPositive);
        check("ep", row.get("ep"), Kind::Int);
        check("dp-attn", row.get("dp-attn"), Kind::Bool);
    } else {
        for side in ["prefill", "decode"] {
            match row.get(side).and_then(Json::as_object) {
                Some(w) => {
                    let at = |f: &str| format!("{side}.{f}");
                    check(&at("num-worker"), w.get("num-worker"), Kind::Int);
                    check(&at("tp"), w.get("tp"), Kind::Int);
                    for f in ["pp", "dcp-size", "pcp-size"] {
                        if w.get(f).is_some() {
                            check(&at(f), w.get(f), Kind::StrictPositive);
                        }
                    }
                    check(&at("ep"), w.get("ep"), Kind::Int);
                    check(&at("dp-attn"), w.get("dp-attn"), Kind::Bool);
                    if let Some(h) = w.get("hardware")
                        && *h != Json::Null
                    {
                        check(&at("hardware"), Some(h), Kind::NonEmptyStr);
                    }
                }
                None => check(side, row.get(side), Kind::Object),
            }
        }
    }
    match model {
        RowModel::SingleNode => check("conc", row.get("conc"), Kind::IntOrIntList),
        RowModel::SingleNodeAgentic => check("conc", row.get("conc"), Kind::Int),
        _ => check("conc", row.get("conc"), Kind::IntList),
    }
    if model.agentic() {
        check(
            "kv-offloading",
            row.get("kv-offloading"),
            Kind::Literal(&["none", "dram"]),
        );
        check(
            "total-cpu-dram-gb",
            row.get("total-cpu-dram-gb"),
            Kind::NonNegative,
        );
        check("duration", row.get("duration"), Kind::Int);
        check("scenario-type", row.get("scenario-type"), Kind::Str);
    } else {
        check("max-model-len", row.get("max-model-len"), Kind::Int);
    }
    check("exp-name", row.get("exp-name"), Kind::Str);
    if model != RowModel::SingleNodeAgentic {
        check("disagg", row.get("disagg"), Kind::Bool);
    }
    if !model.agentic() {
        check("run-eval", row.get("run-eval"), Kind::Bool);
    }
    if let Some(fp) = row.get("recipe-fingerprint")
        && *fp != Json::Null
    {
        check("recipe-fingerprint", Some(fp), Kind::Sha256Hex);
    }
    // Model validators run only when the fields validated (pydantic's "after" validators).
    if errs.is_empty() {
        errs.extend(model_validator_errors(row, model));
    }
    errs
}

fn model_validator_errors(row: &Object, model: RowModel) -> Vec<RowError> {
    let mut out = Vec::new();
    let value_error = |message: String| RowError {
        location: String::new(),
        message: format!("Value error, {message}"),
    };
    let topology = |o: &Object| -> Option<String> {
        let tp = lax_int(o.get("tp")?)?;
        let dcp = o.get("dcp-size").map_or(Some(1), lax_int)?;
        (dcp != 0 && tp % dcp != 0)
            .then(|| format!("'tp' ({tp}) must be divisible by 'dcp-size' ({dcp})"))
    };
    let single = matches!(model, RowModel::SingleNode | RowModel::SingleNodeAgentic);
    if single {
        out.extend(topology(row).map(value_error));
    } else {
        let (p, d) = (
            row.get("prefill").and_then(Json::as_object),
            row.get("decode").and_then(Json::as_object),
        );
        for w in [p, d].into_iter().flatten() {
            out.extend(topology(w).map(value_error));
        }
        let has_hw =
            |w: Option<&Object>| w.and_then(|w| w.get("hardware")).is_some_and(Json::truthy);
        if has_hw(p) != has_hw(d) {
            out.push(value_error(
                "'hardware' must be specified for both 'prefill' and 'decode', or neither"
                    .to_string(),
            ));
        }
        let disagg = row.get("disagg").is_some_and(Json::truthy);
        let transfer = row.get("kv-p2p-transfer").is_some_and(|v| *v != Json::Null);
        if disagg && !transfer {
            out.push(RowError {
                location: String::new(),
                message: KV_P2P_REQUIRED.to_string(),
            });
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Kind {
    Str,
    NonEmptyStr,
    Int,
    Bool,
    Object,
    /// `int, gt=0, strict=True`.
    StrictPositive,
    /// `int, ge=0`.
    NonNegative,
    IntList,
    IntOrIntList,
    Literal(&'static [&'static str]),
    Sha256Hex,
}

/// Pydantic lax `int`: ints, bools, integral floats and integer strings.
fn lax_int(v: &Json) -> Option<i64> {
    match v {
        Json::Int(i) => Some(*i),
        Json::Bool(b) => Some(i64::from(*b)),
        Json::Float(f) if f.fract() == 0.0 && f.is_finite() => Some(*f as i64),
        Json::Str(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn input_repr(v: &Json) -> String {
    match v {
        Json::Str(s) => format!("'{s}'"),
        other => other.to_python(),
    }
}

fn field_error(v: Option<&Json>, kind: Kind) -> Option<String> {
    let Some(v) = v else {
        return Some("Field required [type=missing]".to_string());
    };
    let bad =
        |what: &str, ty: &str| Some(format!("{what} [type={ty}, input_value={}]", input_repr(v)));
    match kind {
        Kind::Str => match v {
            Json::Str(_) => None,
            _ => bad("Input should be a valid string", "string_type"),
        },
        Kind::NonEmptyStr => match v {
            Json::Str(s) if s.is_empty() => bad(
                "String should have at least 1 character",
                "string_too_short",
            ),
            Json::Str(_) => None,
            _ => bad("Input should be a valid string", "string_type"),
        },
        Kind::Int => match lax_int(v) {
            Some(_) => None,
            None => bad("Input should be a valid integer", "int_type"),
        },
        Kind::Bool => match v {
            Json::Bool(_) => None,
            Json::Int(0 | 1) => None,
            Json::Str(s)
                if matches!(
                    s.to_ascii_lowercase().as_str(),
                    "0" | "1"
                        | "true"
                        | "false"
                        | "yes"
                        | "no"
                        | "on"
                        | "off"
                        | "t"
                        | "f"
                        | "y"
                        | "n"
                ) =>
            {
                None
            }
            _ => bad("Input should be a valid boolean", "bool_type"),
        },
        Kind::Object => match v {
            Json::Object(_) => None,
            _ => bad(
                "Input should be a valid dictionary or instance of WorkerConfig",
                "model_type",
            ),
        },
        Kind::StrictPositive => match v {
            Json::Int(i) if *i > 0 => None,
            Json::Int(_) => bad("Input should be greater than 0", "greater_than"),
            _ => bad("Input should be a valid integer", "int_type"),
        },
        Kind::NonNegative => match lax_int(v) {
            Some(i) if i >= 0 => None,
            Some(_) => bad(
                "Input should be greater than or equal to 0",
                "greater_than_equal",
            ),
            None => bad("Input should be a valid integer", "int_type"),
        },
        Kind::IntList => match v {
            Json::List(items) if items.iter().all(|i| lax_int(i).is_some()) => None,
            Json::List(_) => bad("Input should be a valid integer", "int_type"),
            _ => bad("Input should be a valid list", "list_type"),
        },
        Kind::IntOrIntList => match v {
            Json::List(items) if items.iter().all(|i| lax_int(i).is_some()) => None,
            other if lax_int(other).is_some() => None,
            _ => bad(
                "Input should be a valid integer or a list of integers",
                "union",
            ),
        },
        Kind::Literal(choices) => match v {
            Json::Str(s) if choices.contains(&s.as_str()) => None,
            _ => {
                let listed = choices.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>();
                let (head, last) = listed.split_at(listed.len().saturating_sub(1));
                let words = if head.is_empty() {
                    last.join("")
                } else {
                    format!("{} or {}", head.join(", "), last.join(""))
                };
                bad(&format!("Input should be {words}"), "literal_error")
            }
        },
        Kind::Sha256Hex => match v {
            Json::Str(s)
                if s.len() == 64
                    && s.bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) =>
            {
                None
            }
            _ => bad(
                "String should match pattern '^[0-9a-f]{64}$'",
                "string_pattern_mismatch",
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agentic_row(total: i64) -> Object {
        let mut r = Object::new();
        for (k, v) in [
            ("image", Json::str("img")),
            ("model", Json::str("m")),
            ("model-prefix", Json::str("dsv4")),
            ("precision", Json::str("fp4")),
            ("framework", Json::str("sglang")),
            ("runner", Json::str("b300")),
            ("tp", Json::Int(8)),
            ("pp", Json::Int(1)),
            ("dcp-size", Json::Int(1)),
            ("pcp-size", Json::Int(1)),
            ("ep", Json::Int(1)),
            ("dp-attn", Json::Bool(false)),
            ("spec-decoding", Json::str("none")),
            ("conc", Json::Int(4)),
            ("kv-offloading", Json::str("dram")),
            ("total-cpu-dram-gb", Json::Int(total)),
            ("duration", Json::Int(1800)),
            ("exp-name", Json::str("x")),
            ("scenario-type", Json::str("agentic-coding")),
        ] {
            r.put(k, v);
        }
        r
    }

    #[test]
    fn a_negative_dram_total_fails_as_upstream() {
        assert_eq!(check_row(&agentic_row(0)), Ok(()));
        let err = check_row(&agentic_row(-1199)).unwrap_err();
        assert!(
            err.starts_with("The following parsed agentic matrix entry failed validation:\n"),
            "{err}"
        );
        assert!(
            err.contains("total-cpu-dram-gb\n  Input should be greater than or equal to 0"),
            "{err}"
        );
    }

    #[test]
    fn types_literals_and_validators_are_checked() {
        let mut r = agentic_row(10);
        r.set("tp", Json::str("eight"));
        r.set("kv-offloading", Json::str("disk"));
        let errs = row_errors(&r, RowModel::of(&r));
        let locs: Vec<&str> = errs.iter().map(|e| e.location.as_str()).collect();
        assert_eq!(locs, ["tp", "kv-offloading"]);
        let mut r = agentic_row(10);
        r.set("dcp-size", Json::Int(3));
        let errs = row_errors(&r, RowModel::of(&r));
        assert_eq!(
            errs[0].message,
            "Value error, 'tp' (8) must be divisible by 'dcp-size' (3)"
        );
        let mut r = agentic_row(10);
        r.set("pp", Json::Bool(true));
        assert_eq!(row_errors(&r, RowModel::of(&r))[0].location, "pp");
    }
}
