//! A [`Schema`] read from a request type's JSON Schema, so a field's bounds are declared
//! once, on the wire type, and both the published OpenAPI document and the validator use them.
//!
//! The vocabulary understood, per property (everything else is refused, so a bound the
//! validator would silently ignore cannot be declared):
//! - `required` makes a field required; a type that admits `null` (`Option<T>`) makes an
//!   optional field clearable (`null` counts as absent), otherwise `null` is refused;
//! - `type: string` with `minLength`, `maxLength` and `pattern: "\S"` (not blank);
//! - `type: integer` / `number` with `minimum`, `maximum`;
//! - `enum` (strings or integers) and `oneOf` of `const` strings; a string `enum`'s
//!   `x-aliases` (`{older spelling: value}`) are taken and rewritten to their value;
//! - `format`: `email`, `uuid`, `date-time`, `date`, `phone`, and the named checks of
//!   the `formats` module; numeric formats (`int64`, `uint32`, `double`, …) are annotations;
//! - `type: array` with `items`, `minItems`, `maxItems`;
//! - `type: object` with `properties` (a nested schema) or without (any object);
//! - no type at all, or an `anyOf` of several non-null shapes: any value but `null` (the
//!   core checks which shape fits);
//!
//! Property order is the struct's field order (schemars keeps it), which is the order the
//! messages come in.

use schemars::JsonSchema;
use schemars::generate::{Contract, SchemaSettings};
use serde_json::{Map, Value};

use super::formats;
use super::schema::{Kind, Schema};

/// The JSON Schema of a request type as the server reads it: subschemas inlined, with the
/// deserialisation contract (what `serde` accepts).
pub fn request_schema<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    settings.contract = Contract::Deserialize;
    settings.into_generator().root_schema_for::<T>().to_value()
}

/// The validator of an object schema.
pub fn schema_of(root: &Value) -> Result<Schema, String> {
    let obj = root.as_object().ok_or("the schema is not an object")?;
    let required: Vec<&str> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut schema = Schema::new();
    let Some(props) = obj.get("properties") else {
        return Ok(schema);
    };
    let props = props.as_object().ok_or("properties is not an object")?;
    for (name, prop) in props {
        let (kind, nullable) = kind_of(prop).map_err(|e| format!("{name}: {e}"))?;
        let name = name.clone();
        schema = if required.contains(&name.as_str()) {
            schema.required(name, kind)
        } else if nullable {
            schema.optional(name, kind)
        } else {
            schema.optional_not_null(name, kind)
        };
    }
    Ok(schema)
}

/// The kind of a property and whether it admits `null`.
fn kind_of(prop: &Value) -> Result<(Kind, bool), String> {
    let obj = match prop {
        Value::Bool(true) => return Ok((Kind::Any, false)),
        Value::Object(o) => o,
        _ => return Err("unsupported schema".into()),
    };
    // `Option<T>` of a composite T: `anyOf: [T, {type: null}]`.
    if let Some(Value::Array(variants)) = obj.get("anyOf") {
        let (nulls, others): (Vec<&Value>, Vec<&Value>) = variants
            .iter()
            .partition(|v| v.get("type").and_then(Value::as_str) == Some("null"));
        return match (nulls.len(), others.as_slice()) {
            (1, [inner]) => kind_of(inner).map(|(k, _)| (k, true)),
            // A value of several shapes whose meaning depends on a sibling (a step's
            // `value` by its `kind`): any value but `null` here, the core checks the rest.
            (0, [_, _, ..]) => Ok((Kind::Any, false)),
            _ => {
                Err("anyOf is only understood as T-or-null or as a union of non-null shapes".into())
            }
        };
    }
    let (ty, nullable) = match obj.get("type") {
        None => (None, false),
        Some(Value::String(t)) => (Some(t.as_str()), t == "null"),
        Some(Value::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            let non_null: Vec<&str> = names.iter().copied().filter(|t| *t != "null").collect();
            match non_null.as_slice() {
                [one] => (Some(*one), names.len() > 1),
                _ => return Err(format!("type {names:?} has more than one non-null type")),
            }
        }
        Some(_) => return Err("type is neither a string nor an array".into()),
    };
    Ok((kind_of_type(obj, ty)?, nullable))
}

fn kind_of_type(obj: &Map<String, Value>, ty: Option<&str>) -> Result<Kind, String> {
    if let Some(values) = enum_values(obj)? {
        return Ok(values);
    }
    let usize_of = |key: &str| {
        obj.get(key)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    if let Some(format) = obj.get("format").and_then(Value::as_str)
        && let Some(kind) = formats::kind(format, usize_of("maxLength"))
    {
        return Ok(kind);
    }
    Ok(match ty {
        None => Kind::Any,
        Some("string") => Kind::Str {
            min: usize_of("minLength"),
            max: usize_of("maxLength"),
            not_blank: match obj.get("pattern").and_then(Value::as_str) {
                None => false,
                Some(r"\S") => true,
                Some(p) => return Err(format!("pattern {p} has no rule")),
            },
        },
        // A boolean the query spells as the words `true` and `false` (`x-wm-words`): checked
        // as those words, as the spec writes it.
        Some("boolean") if obj.get("x-wm-words") == Some(&Value::Bool(true)) => {
            Kind::OneOf(vec!["true".to_owned(), "false".to_owned()])
        }
        Some("boolean") => Kind::Bool,
        Some("integer") => Kind::Int {
            min: obj.get("minimum").and_then(Value::as_i64),
            max: obj.get("maximum").and_then(Value::as_i64),
        },
        Some("number") => Kind::Number {
            min: obj.get("minimum").and_then(Value::as_f64),
            max: obj.get("maximum").and_then(Value::as_f64),
        },
        Some("array") => {
            let items = obj.get("items").ok_or("an array without items")?;
            Kind::Array {
                item: Box::new(kind_of(items)?.0),
                min: usize_of("minItems"),
                max: usize_of("maxItems"),
            }
        }
        Some("object") if obj.contains_key("properties") => {
            Kind::Object(Box::new(schema_of(&Value::Object(obj.clone()))?))
        }
        Some("object") => Kind::Map,
        Some(other) => return Err(format!("type {other} has no rule")),
    })
}

/// `enum: [...]` (null dropped) or `oneOf: [{const: ...}, ...]`, as a kind.
fn enum_values(obj: &Map<String, Value>) -> Result<Option<Kind>, String> {
    let values: Vec<&Value> = if let Some(Value::Array(values)) = obj.get("enum") {
        values.iter().filter(|v| !v.is_null()).collect()
    } else if let Some(Value::Array(variants)) = obj.get("oneOf") {
        variants
            .iter()
            .map(|v| v.get("const").ok_or("oneOf is only understood over consts"))
            .collect::<Result<_, _>>()?
    } else {
        return Ok(None);
    };
    if let Some(strings) = values
        .iter()
        .map(|v| v.as_str())
        .collect::<Option<Vec<_>>>()
    {
        let values: Vec<String> = strings.into_iter().map(str::to_owned).collect();
        // Older spellings a wire enum still takes (`x-aliases: {old: value}`).
        if let Some(Value::Object(aliases)) = obj.get("x-aliases") {
            let aliases = aliases
                .iter()
                .map(|(a, v)| match v.as_str() {
                    Some(v) if values.iter().any(|known| known == v) => {
                        Ok((a.clone(), v.to_owned()))
                    }
                    _ => Err(format!("the alias {a} names no value of the enum")),
                })
                .collect::<Result<_, String>>()?;
            return Ok(Some(Kind::OneOfAliased { values, aliases }));
        }
        return Ok(Some(Kind::OneOf(values)));
    }
    if let Some(ints) = values
        .iter()
        .map(|v| v.as_i64())
        .collect::<Option<Vec<_>>>()
    {
        return Ok(Some(Kind::IntOneOf(ints)));
    }
    Err("an enum mixes strings and numbers".into())
}
