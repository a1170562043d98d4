//! Sizing a structured reply to its token limit. Every free-text string a JSON schema leaves unbounded gets
//! a `maxLength` that makes the whole reply fit the limit — the fixed parts (keys, brackets, enum values)
//! counted by the caller's tokenizer, each character of a string taken as a token. A server that decodes
//! under the schema then closes a long reason at its bound instead of running out of tokens mid-JSON: the
//! in-process GGUF runner and every provider that takes a schema get the same bounds.

use serde_json::{Value, json};

/// Free-text strings are never cut shorter than this, however small the token budget.
pub const MIN_STRING_CHARS: usize = 16;

/// The schema a provider is sent for a request limited to `max_tokens`: every unbounded string given its
/// share, the fixed parts counted as cl100k tokens (a provider's own tokenizer is not at hand); unchanged
/// with no limit.
pub fn bounded_for(schema: &Value, max_tokens: Option<u32>) -> Value {
    let mut schema = schema.clone();
    if let Some(limit) = max_tokens {
        let fixed = ragtester_text::tokens::count_tokens(&skeleton(&schema));
        bound_strings(&mut schema, limit as usize, fixed);
    }
    schema
}

/// Items an array the schema leaves unbounded may hold: a small model asked for keywords otherwise lists
/// them until its token limit cuts the reply mid-JSON (SmolLM2-135M as question writer did).
pub const MAX_ITEMS: usize = 8;

/// Give each unbounded string of `schema` an equal share of what `max_tokens` leaves after the reply's
/// `fixed_tokens` (at least [`MIN_STRING_CHARS`]), every unbounded array [`MAX_ITEMS`] items at most, a
/// string in an array's items counted once per item it may hold.
pub fn bound_strings(schema: &mut Value, max_tokens: usize, fixed_tokens: usize) {
    bound_arrays(schema);
    let strings = string_slots(schema);
    if let Some(share) = max_tokens.saturating_sub(fixed_tokens).checked_div(strings) {
        let share = share.max(MIN_STRING_CHARS);
        for node in free_strings(schema) {
            node.insert("maxLength".into(), share.into());
        }
    }
}

/// Every array node with no `maxItems` gets [`MAX_ITEMS`].
fn bound_arrays(node: &mut Value) {
    match node {
        Value::Object(map) => {
            if map.get("type") == Some(&json!("array")) && !map.contains_key("maxItems") {
                map.insert("maxItems".into(), MAX_ITEMS.into());
            }
            for (key, value) in map.iter_mut() {
                if !["enum", "const", "default", "examples"].contains(&key.as_str()) {
                    bound_arrays(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(bound_arrays),
        _ => {}
    }
}

/// How many free strings a reply may hold: each free string once, times the `maxItems` of every array
/// it is an item of.
pub fn string_slots(schema: &Value) -> usize {
    fn walk(node: &Value, times: usize) -> usize {
        match node {
            Value::Object(map) => {
                if is_free_string(map) {
                    return times;
                }
                map.iter()
                    .filter(|(key, _)| {
                        !["enum", "const", "default", "examples"].contains(&key.as_str())
                    })
                    .map(|(key, value)| {
                        let each = if key == "items" {
                            map.get("maxItems")
                                .and_then(Value::as_u64)
                                .map_or(MAX_ITEMS, |n| n as usize)
                        } else {
                            1
                        };
                        walk(value, times * each)
                    })
                    .sum()
            }
            Value::Array(items) => items.iter().map(|v| walk(v, times)).sum(),
            _ => 0,
        }
    }
    walk(schema, 1)
}

/// A string node with no bound of its own: no `maxLength`, `enum`, `const`, `pattern` or `format`.
fn is_free_string(map: &serde_json::Map<String, Value>) -> bool {
    let bounded = ["maxLength", "enum", "const", "pattern", "format"]
        .iter()
        .any(|k| map.contains_key(*k));
    map.get("type") == Some(&json!("string")) && !bounded
}

/// The schema's string nodes with no bound of their own: no `maxLength`, `enum`, `const`, `pattern` or
/// `format`.
pub fn free_strings(schema: &mut Value) -> Vec<&mut serde_json::Map<String, Value>> {
    fn walk<'a>(node: &'a mut Value, out: &mut Vec<&'a mut serde_json::Map<String, Value>>) {
        match node {
            Value::Object(map) => {
                if is_free_string(map) {
                    out.push(map);
                    return;
                }
                for (key, value) in map.iter_mut() {
                    // Literal values, not schemas.
                    if !["enum", "const", "default", "examples"].contains(&key.as_str()) {
                        walk(value, out);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut out);
    out
}

/// The shortest reply the schema allows, roughly: every property present, strings empty, the longest
/// enum value, as the grammar spaces it. Its tokens are the reply's fixed cost.
pub fn skeleton(schema: &Value) -> String {
    let Some(map) = schema.as_object() else {
        return "null".into();
    };
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(Value::to_string)
            .max_by_key(String::len)
            .unwrap_or_default();
    }
    if let Some(value) = map.get("const") {
        return value.to_string();
    }
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        let fields: Vec<String> = properties
            .iter()
            .map(|(key, value)| format!("{}: {}", Value::from(key.as_str()), skeleton(value)))
            .collect();
        return format!("{{{}}}", fields.join(", "));
    }
    match map.get("type").and_then(Value::as_str) {
        Some("string") => "\"\"".into(),
        Some("array") => "[]".into(),
        Some("object") => "{}".into(),
        Some("boolean") => "false".into(),
        _ => "0".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_bounded_and_their_strings_counted_per_item() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "question": { "type": "string" },
                "keywords": { "type": "array", "items": { "type": "string" } },
                "tags": { "type": "array", "maxItems": 2, "items": { "type": "string" } }
            }
        });
        assert_eq!(string_slots(&schema), 1 + MAX_ITEMS + 2);
        bound_strings(&mut schema, 300, 20);
        assert_eq!(schema["properties"]["keywords"]["maxItems"], MAX_ITEMS);
        assert_eq!(schema["properties"]["tags"]["maxItems"], 2);
        let share = (300 - 20) / (1 + MAX_ITEMS + 2);
        assert_eq!(
            schema["properties"]["question"]["maxLength"],
            share.max(MIN_STRING_CHARS)
        );
        assert_eq!(
            schema["properties"]["keywords"]["items"]["maxLength"],
            share.max(MIN_STRING_CHARS)
        );
    }

    #[test]
    fn only_unbounded_strings_get_a_share() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "verdict": { "type": "string", "enum": ["yes", "no"] },
                "reason": { "type": "string" },
                "quote": { "type": "string", "maxLength": 40 }
            }
        });
        let fixed = skeleton(&schema).len();
        bound_strings(&mut schema, 100, 20);
        assert_eq!(schema["properties"]["reason"]["maxLength"], 80);
        assert_eq!(schema["properties"]["quote"]["maxLength"], 40);
        assert!(schema["properties"]["verdict"].get("maxLength").is_none());
        assert!(fixed > 0);
        let mut tight = json!({ "type": "object", "properties": { "a": { "type": "string" } } });
        bound_strings(&mut tight, 10, 20);
        assert_eq!(tight["properties"]["a"]["maxLength"], MIN_STRING_CHARS);
    }
}
