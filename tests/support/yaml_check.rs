//! The cross-check of kubeloop's own YAML reader against a maintained YAML library: yaml_serde
//! (libyaml underneath) reads the same text into JSON values, and the two must agree — the same
//! documents, or both refuse — except where a difference is accepted on purpose (`Accepted`).
//! Shared by `tests/yaml_reader.rs` (every manifest the tests use) and `tests/fuzz_commands.rs`
//! (the mutated manifests and scenarios it generates).

use serde::Deserialize;
use serde_json::Value;

/// The differences between the two readers accepted on purpose, each for its reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accepted {
    /// A text whose first non-blank character is `{` is a JSON stream to kubectl: apimachinery's
    /// `YAMLOrJSONDecoder` looks at that byte and then decodes JSON, and so does kubeloop. So
    /// objects one after another are read (YAML refuses a second document without `---`), a
    /// `---` after one is refused (YAML reads a document marker) and YAML's plain scalars are
    /// not JSON (`{"a": b}`). Such a text is checked against serde_json's stream instead, and
    /// against yaml_serde too whenever it is a single JSON value, which YAML 1.2 reads alike.
    JsonStream,
    /// Explicit keys (`? key`) are valid YAML that no manifest needs; kubeloop refuses them,
    /// saying so, rather than carry their code in the page (yaml_serde reads simple ones and
    /// refuses complex ones too: a JSON key must be a string).
    ExplicitKey,
}

/// What yaml_serde reads from a stream, the way kubeloop's loader is asked: every document into
/// a JSON value, empty documents (`---` alone, or a bare `null`) skipped as kubectl skips them.
pub fn yaml_serde_documents(text: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for document in yaml_serde::Deserializer::from_str(text) {
        let value = Value::deserialize(document).map_err(|e| e.to_string())?;
        if !value.is_null() {
            out.push(value);
        }
    }
    Ok(out)
}

/// What kubeloop's loader reads, empty documents skipped likewise.
pub fn our_documents(text: &str) -> Result<Vec<Value>, String> {
    kubeloop::command::yaml::documents(text).map(|docs| docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// A JSON text's values one after another, as Go's `json.Decoder` (and serde_json) reads them.
fn json_stream(text: &str) -> Result<Vec<Value>, String> {
    serde_json::Deserializer::from_str(text).into_iter::<Value>().map(|v| v.map_err(|e| e.to_string())).collect()
}

/// Whether two readings agree: the same documents, or both refuse.
fn agree(a: &Result<Vec<Value>, String>, b: &Result<Vec<Value>, String>) -> bool {
    match (a, b) {
        (Ok(a), Ok(b)) => a == b,
        (Err(_), Err(_)) => true,
        _ => false,
    }
}

/// How the two readers compare on `text`: `Ok(None)` alike, `Ok(Some(why))` different in an
/// accepted way, `Err(what)` different otherwise.
pub fn compare(text: &str) -> Result<Option<Accepted>, String> {
    let ours = our_documents(text);
    if text.trim_start().starts_with('{') {
        let json = json_stream(text);
        let single: Option<Value> = serde_json::from_str(text).ok();
        let yaml_agrees =
            single.is_none_or(|v| agree(&Ok(vec![v].into_iter().filter(|d| !d.is_null()).collect()), &yaml_serde_documents(text)));
        if agree(&ours, &json) && yaml_agrees {
            return Ok(if agree(&ours, &yaml_serde_documents(text)) { None } else { Some(Accepted::JsonStream) });
        }
        return Err(format!("ours: {ours:?}\nserde_json: {json:?}\nyaml_serde: {:?}", yaml_serde_documents(text)));
    }
    let theirs = yaml_serde_documents(text);
    match (&ours, &theirs) {
        _ if agree(&ours, &theirs) => Ok(None),
        (Err(e), _) if e.contains("complex mapping keys are not supported") => Ok(Some(Accepted::ExplicitKey)),
        _ => Err(format!("ours: {ours:?}\nyaml_serde: {theirs:?}")),
    }
}

/// Why the two readers disagree on `text` beyond the accepted differences, if they do.
pub fn disagreement(text: &str) -> Option<String> {
    compare(text).err()
}
