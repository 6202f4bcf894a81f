//! Field selectors (`--field-selector`, a list's or a watch's `fieldSelector`): data with a pure
//! matcher, here so that the API server's watches and kubectl's printers share one parser.

use serde_json::Value;

/// `--field-selector`: `field=value`, `field==value` or `field!=value`, comma-separated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    terms: Vec<(String, bool, String)>,
}

impl FieldSelector {
    /// Parses it, accepting only the fields the API server supports for the resource
    /// (`resource` as the server names it in errors: `/v1, Resource=pods`).
    pub fn parse(text: &str, resource: &str, supported: &[&str]) -> Result<FieldSelector, String> {
        let mut terms = Vec::new();
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = term.split_once('=') {
                (f, true, v)
            } else {
                return Err(format!("error: invalid selector: '{text}'; can't understand '{term}'"));
            };
            let field = field.trim();
            if field != "metadata.name" && field != "metadata.namespace" && !supported.contains(&field) {
                return Err(format!(
                    "Error from server (BadRequest): Unable to find {resource:?} that match label selector \"\", field selector {text:?}: field label not supported: {field}"
                ));
            }
            terms.push((field.to_string(), equal, value.trim().to_string()));
        }
        Ok(FieldSelector { terms })
    }

    /// Whether the object (as JSON) satisfies every term. A missing field reads as "".
    pub fn matches(&self, object: &Value) -> bool {
        self.terms.iter().all(|(field, equal, value)| {
            let mut v = object;
            for part in field.split('.') {
                v = v.get(part).unwrap_or(&Value::Null);
            }
            let actual = match v {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (actual == *value) == *equal
        })
    }
}
