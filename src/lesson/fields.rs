//! Typed reads from a lesson file's YAML, with errors that name the field.
//!
//! Lesson files are written by course authors, not by us, so every shape mistake must come back
//! as a sentence naming where it is (`steps[2].check.pods.count: must be a whole number, got
//! "three"`), never as a panic or a serde message about an anonymous map.

use crate::model::Duration;
use serde_json::{Map, Value};

/// One mapping of the file and the path that leads to it.
pub struct Fields<'a> {
    pub map: &'a Map<String, Value>,
    pub path: String,
}

/// The path of `key` under `path` (`steps[1]` + `check` = `steps[1].check`).
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// How a value is described in an error: its text, or what kind of thing it is.
pub fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "nothing".into(),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a mapping".into(),
    }
}

impl<'a> Fields<'a> {
    /// `v` as a mapping, or an error naming `path`.
    pub fn of(v: &'a Value, path: &str) -> Result<Fields<'a>, String> {
        match v {
            Value::Object(map) => Ok(Fields { map, path: path.to_string() }),
            other => Err(format!("{}: must be a mapping, got {}", if path.is_empty() { "lesson" } else { path }, shown(other))),
        }
    }

    /// Fails on a key that is not in `known`, listing what is.
    pub fn only(&self, known: &[&str]) -> Result<(), String> {
        for key in self.map.keys() {
            if !known.contains(&key.as_str()) {
                let at = if self.path.is_empty() { "lesson".to_string() } else { self.path.clone() };
                return Err(format!("{at}: unknown field {key:?} (expected one of: {})", known.join(", ")));
            }
        }
        Ok(())
    }

    pub fn at(&self, key: &str) -> String {
        join(&self.path, key)
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn string(&self, key: &str) -> Result<Option<String>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            // Authors write `count: 3` and `answer: 4` unquoted; numbers and booleans read as their text.
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(Value::Bool(b)) => Ok(Some(b.to_string())),
            Some(other) => Err(format!("{}: must be text, got {}", self.at(key), shown(other))),
        }
    }

    pub fn required_string(&self, key: &str) -> Result<String, String> {
        self.string(key)?.filter(|s| !s.trim().is_empty()).ok_or_else(|| format!("{}: is required", self.at(key)))
    }

    pub fn int(&self, key: &str) -> Result<Option<i64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| format!("{}: must be a whole number, got {}", self.at(key), shown(v))),
        }
    }

    pub fn number(&self, key: &str) -> Result<Option<f64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| format!("{}: must be a number, got {}", self.at(key), shown(v))),
        }
    }

    pub fn boolean(&self, key: &str) -> Result<Option<bool>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(format!("{}: must be true or false, got {}", self.at(key), shown(v))),
        }
    }

    pub fn duration(&self, key: &str) -> Result<Option<Duration>, String> {
        match self.string(key)? {
            None => Ok(None),
            Some(text) => Duration::parse(&text).map(Some).map_err(|e| format!("{}: {e}", self.at(key))),
        }
    }

    /// A string or a list of strings (`action: kubectl ...` or `action: [a, b]`).
    pub fn lines(&self, key: &str) -> Result<Vec<String>, String> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(s.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) => Ok(s.trim().to_string()),
                    other => Err(format!("{}[{i}]: must be a command line, got {}", self.at(key), shown(other))),
                })
                .collect(),
            Some(other) => Err(format!("{}: must be a command line or a list of them, got {}", self.at(key), shown(other))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_name_the_field() {
        let v = json!({"count": "three", "within": "soon", "extra": 1});
        let f = Fields::of(&v, "steps[2].check.pods").unwrap();
        assert_eq!(f.int("count").unwrap_err(), "steps[2].check.pods.count: must be a whole number, got \"three\"");
        assert_eq!(
            f.duration("within").unwrap_err(),
            "steps[2].check.pods.within: invalid duration \"soon\": expected a number with a unit, like 500ms, 30s, 5m or 1h"
        );
        assert_eq!(
            f.only(&["count", "within"]).unwrap_err(),
            "steps[2].check.pods: unknown field \"extra\" (expected one of: count, within)"
        );
        assert_eq!(Fields::of(&json!([1]), "steps[0]").err().unwrap(), "steps[0]: must be a mapping, got a list");
    }

    #[test]
    fn lines_accept_text_or_lists() {
        let v = json!({"a": "one\n two \n", "b": ["x", 3]});
        let f = Fields::of(&v, "s").unwrap();
        assert_eq!(f.lines("a").unwrap(), vec!["one", "two"]);
        assert_eq!(f.lines("b").unwrap_err(), "s.b[1]: must be a command line, got 3");
        assert_eq!(f.lines("missing").unwrap(), Vec::<String>::new());
    }
}
