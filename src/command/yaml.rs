//! YAML in and out, as kubectl reads and writes it.
//!
//! Out: `kubectl get -o yaml` goes through sigs.k8s.io/yaml, i.e. go-yaml v2 over a JSON map:
//! keys sorted, sequences not indented under their key, strings that would read back as
//! another type (`"1"`, `"true"`, timestamps) in double quotes, strings a plain scalar cannot
//! hold in single quotes, multi-line strings as `|` blocks. yaml_serde's emitter differs in
//! exactly the places learners look (`resourceVersion: '12'`, unquoted timestamps), so this
//! module emits the go-yaml form itself.
//!
//! In: multi-document YAML (or a JSON stream) into JSON values, stopping at the first broken
//! document; the YAML side is our own small reader (`reader`), which is far smaller in the page's
//! wasm than a general YAML library and reads everything manifests and scenario files use.

use serde_json::Value;

mod reader;

/// Emits `value` as go-yaml v2 would.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => emit_map(m, 0, &mut out),
        Value::Array(a) if !a.is_empty() => emit_seq(a, 0, &mut out),
        other => {
            out.push_str(&scalar(other, 0));
            out.push('\n');
        }
    }
    out
}

fn emit_map(map: &serde_json::Map<String, Value>, indent: usize, out: &mut String) {
    let mut first = true;
    for (k, v) in map {
        if !first {
            push_indent(out, indent);
        }
        first = false;
        out.push_str(&string_scalar(k, indent, true));
        out.push(':');
        emit_value_after_key(v, indent, out);
    }
}

fn emit_value_after_key(v: &Value, indent: usize, out: &mut String) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            push_indent(out, indent + 2);
            emit_map(m, indent + 2, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            push_indent(out, indent);
            emit_seq(a, indent, out);
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other, indent + 2));
            out.push('\n');
        }
    }
}

fn emit_seq(items: &[Value], indent: usize, out: &mut String) {
    let mut first = true;
    for item in items {
        if !first {
            push_indent(out, indent);
        }
        first = false;
        out.push_str("- ");
        match item {
            Value::Object(m) if !m.is_empty() => emit_map(m, indent + 2, out),
            Value::Array(a) if !a.is_empty() => emit_seq(a, indent + 2, out),
            other => {
                out.push_str(&scalar(other, indent + 2));
                out.push('\n');
            }
        }
    }
}

fn push_indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A scalar (or empty collection) in flow position; `indent` is where a block scalar's lines go.
fn scalar(v: &Value, indent: usize) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string_scalar(s, indent, false),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

fn string_scalar(s: &str, indent: usize, is_key: bool) -> String {
    if s.contains('\n') && !is_key && s.chars().all(|c| c == '\n' || !c.is_control()) && !s.starts_with(' ') {
        return literal_block(s, indent);
    }
    if resolves_to_non_string(s) {
        return double_quoted(s);
    }
    if plain_allowed(s) {
        return s.to_string();
    }
    if s.chars().any(|c| c.is_control() || c == '\n') {
        return double_quoted(s);
    }
    format!("'{}'", s.replace('\'', "''"))
}

fn literal_block(s: &str, indent: usize) -> String {
    let trailing = s.len() - s.trim_end_matches('\n').len();
    let chomp = match trailing {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let mut out = format!("|{chomp}");
    let body = if trailing == 1 { &s[..s.len() - 1] } else { s.trim_end_matches('\n') };
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            push_indent(&mut out, indent);
            out.push_str(line);
        }
    }
    if trailing > 1 {
        for _ in 1..trailing {
            out.push('\n');
        }
    }
    out
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// go-yaml v2's resolver: would this text, unquoted, read back as null, bool, number or time?
fn resolves_to_non_string(s: &str) -> bool {
    const SPECIAL: &[&str] = &[
        "", "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
        "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
        "-.INF", ".nan", ".NaN", ".NAN", "<<",
    ];
    if SPECIAL.contains(&s) {
        return true;
    }
    let first = s.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return false;
    }
    is_number(s) || is_timestamp(s)
}

fn is_number(s: &str) -> bool {
    let plain = s.replace('_', "");
    let body = plain.trim_start_matches(['-', '+']);
    if body.is_empty() {
        return false;
    }
    if let Some(hex) = body.strip_prefix("0x") {
        return !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    if let Some(bin) = body.strip_prefix("0b") {
        return !bin.is_empty() && bin.chars().all(|c| c == '0' || c == '1');
    }
    if body.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    // Floats: digits with one dot and an optional exponent; also sexagesimal like 1:30 (base 60).
    if body.split(':').count() > 1 && body.split(':').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit() || c == '.')) {
        return true;
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mantissa_ok = mantissa.matches('.').count() <= 1
        && mantissa.chars().any(|c| c.is_ascii_digit())
        && mantissa.chars().all(|c| c.is_ascii_digit() || c == '.');
    let exponent_ok = exponent.is_none_or(|e| {
        let d = e.trim_start_matches(['-', '+']);
        !d.is_empty() && d.chars().all(|c| c.is_ascii_digit())
    });
    mantissa_ok && exponent_ok
}

fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let date = |b: &[u8]| {
        let parts: Vec<&[u8]> = b.split(|c| *c == b'-').collect();
        parts.len() == 3
            && parts[0].len() == 4
            && parts.iter().all(|p| !p.is_empty() && p.len() <= 4 && p.iter().all(u8::is_ascii_digit))
            && parts[1].len() <= 2
            && parts[2].len() <= 2
    };
    match b.iter().position(|c| matches!(c, b'T' | b't' | b' ')) {
        None => date(b),
        Some(i) => date(&b[..i]) && b.len() > i + 1 && b[i + 1].is_ascii_digit(),
    }
}

/// libyaml's analysis of whether a scalar may be written plain in block context.
fn plain_allowed(s: &str) -> bool {
    if s.starts_with(' ') || s.ends_with(' ') || s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next_blank = chars.get(i + 1).is_none_or(|n| *n == ' ' || *n == '\t');
        let prev_blank = i > 0 && (chars[i - 1] == ' ' || chars[i - 1] == '\t');
        if c.is_control() || c == '\u{feff}' {
            return false;
        }
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%' | '@' | '`' => return false,
                '?' | ':' | '-' if next_blank => return false,
                _ => {}
            }
        } else {
            match c {
                ':' if next_blank => return false,
                '#' if prev_blank => return false,
                _ => {}
            }
        }
    }
    true
}

/// Reads every document of a YAML (or JSON) stream, stopping at the first broken one.
/// Empty documents (`---` alone) are skipped, as kubectl skips them.
pub fn documents(text: &str) -> Result<Vec<Value>, String> {
    if text.trim_start().starts_with('{') {
        let mut docs = Vec::new();
        for v in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
            docs.push(v.map_err(|e| e.to_string())?);
        }
        return Ok(docs);
    }
    reader::documents(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_print_in_go_yaml_style() {
        let v = json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"annotations": {"deployment.kubernetes.io/revision": "1"}, "creationTimestamp": "2026-01-01T00:00:00Z", "generation": 1, "name": "web", "resourceVersion": "12"},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [{"image": "nginx:1.14.2", "name": "nginx", "ports": [{"containerPort": 80, "protocol": "TCP"}], "resources": {}}]}}},
            "status": {}
        });
        assert_eq!(
            to_yaml(&v),
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  annotations:\n    deployment.kubernetes.io/revision: \"1\"\n  creationTimestamp: \"2026-01-01T00:00:00Z\"\n  generation: 1\n  name: web\n  resourceVersion: \"12\"\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - image: nginx:1.14.2\n        name: nginx\n        ports:\n        - containerPort: 80\n          protocol: TCP\n        resources: {}\nstatus: {}\n"
        );
    }

    #[test]
    fn strings_are_quoted_only_when_go_yaml_would() {
        let q = |s: &str| string_scalar(s, 0, false);
        assert_eq!(q("web"), "web");
        assert_eq!(q("true"), "\"true\"");
        assert_eq!(q("1.14"), "\"1.14\"");
        assert_eq!(q("0755"), "\"0755\"");
        assert_eq!(q(""), "\"\"");
        assert_eq!(q("*"), "'*'");
        assert_eq!(q("a: b"), "'a: b'");
        assert_eq!(q("it's"), "it's");
        assert_eq!(q("-c"), "-c");
        assert_eq!(q("- x"), "'- x'");
        assert_eq!(q("nginx:1.14.2"), "nginx:1.14.2");
        assert_eq!(q("10.244.1.2"), "10.244.1.2");
        assert_eq!(q("100m"), "100m");
        assert_eq!(q("2026-01-01"), "\"2026-01-01\"");
    }

    #[test]
    fn multi_line_strings_become_literal_blocks() {
        let v = json!({"a": {"b": "{\"x\":1}\n"}, "c": "one\ntwo"});
        assert_eq!(to_yaml(&v), "a:\n  b: |\n    {\"x\":1}\nc: |-\n  one\n  two\n");
    }

    #[test]
    fn emitted_yaml_reads_back_unchanged() {
        let v = json!({"s": ["true", "1", "", "a: b", "#x", "x #y", " lead", "trail ", "it's", "null", "1e3", "0x1F", "multi\nline\n", "tab\tin"], "n": 1.5, "b": false, "z": null, "e": {}, "l": []});
        let back = documents(&to_yaml(&v)).unwrap();
        assert_eq!(back, vec![v]);
    }

    #[test]
    fn broken_documents_stop_the_stream_without_panicking() {
        assert_eq!(documents("a: 1\n---\n---\nb: 2\n").unwrap(), vec![json!({"a": 1}), json!({"b": 2})]);
        assert!(documents("a: 1\n---\nb: [1, 2\n---\nc: 3\n").is_err());
        assert!(documents("a: {b: 1}\nc: *unknown\n").is_err());
        assert!(documents("&a [*a]").is_err());
        assert_eq!(documents("{\"a\": 1} {\"b\": 2}").unwrap(), vec![json!({"a": 1}), json!({"b": 2})]);
        assert!(documents("").unwrap().is_empty());
    }
}
