//! Objects whose shape the API server learns at run time: CustomResourceDefinitions and the
//! custom objects they define.
//!
//! Every built-in kind is a struct of its own (a row of `kinds.rs`), decoded by hand and
//! compared field by field. A custom resource's fields are known only from its definition's
//! schema, so both the definition and its objects keep everything but `metadata` as JSON
//! (`Content`), behind a `Shared` so an object stays as small as the built-in kinds need it to
//! be. One `Kind` row serves every custom resource (`Kind::CustomObject`); which resource an
//! object belongs to is its definition's name (`plural.group`), kept in the object and in its
//! `ObjectKey::resource`, so etcd's keyspace, watches and caches tell resources apart without a
//! `Kind` per definition.

use super::decode::{invalid_type, Decoded, FromValue};
use super::meta::ObjectMeta;
use super::name::Name;
use super::schema::{Describe, Field, Named, Schema, Struct};
use super::shared::Shared;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Value};

/// The fields of an object kept as JSON: every top-level field but `apiVersion`, `kind` and
/// `metadata`.
pub type Content = Map<String, Value>;

/// `apiextensions.k8s.io/v1` CustomResourceDefinition: its `spec` and `status` as JSON (read
/// into a typed view by `api::crd`, which validates them).
#[derive(Clone, Debug, Default)]
pub struct CustomResourceDefinition {
    pub metadata: ObjectMeta,
    pub content: Shared<Content>,
}

impl CustomResourceDefinition {
    pub fn spec(&self) -> Option<&Value> {
        self.content.get("spec")
    }
    pub fn status(&self) -> Option<&Value> {
        self.content.get("status")
    }
    /// The condition of this type, as `(status, reason, message)`.
    pub fn condition(&self, type_: &str) -> Option<(&str, &str, &str)> {
        let conditions = self.status()?.get("conditions")?.as_array()?;
        let c = conditions.iter().find(|c| c.get("type").and_then(Value::as_str) == Some(type_))?;
        let text = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
        Some((text("status"), text("reason"), text("message")))
    }
}

/// An object of a custom resource.
#[derive(Clone, Debug, Default)]
pub struct CustomObject {
    pub metadata: ObjectMeta,
    pub body: Shared<CustomBody>,
}

/// What a custom object carries besides its metadata.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CustomBody {
    /// The definition's name (`crontabs.stable.example.com`): the resource the object belongs
    /// to, and its key's `resource`. Empty until the API server (or a client that read
    /// discovery) resolved `apiVersion` and `kind`.
    pub resource: Name,
    pub api_version: Name,
    pub kind: Name,
    pub content: Content,
}

impl CustomObject {
    /// A custom object read from a manifest: the resource is resolved later.
    pub fn new(api_version: &str, kind: &str, metadata: ObjectMeta, content: Content) -> Self {
        CustomObject {
            metadata,
            body: Shared::new(CustomBody { resource: Name::default(), api_version: api_version.into(), kind: kind.into(), content }),
        }
    }
    pub fn resource(&self) -> &str {
        &self.body.resource
    }
    pub fn api_version(&self) -> &str {
        &self.body.api_version
    }
    pub fn kind(&self) -> &str {
        &self.body.kind
    }
    pub fn content(&self) -> &Content {
        &self.body.content
    }
    /// The group of the object's `apiVersion` (`stable.example.com`).
    pub fn group(&self) -> &str {
        self.body.api_version.split_once('/').map_or("", |(g, _)| g)
    }
    /// The object as JSON, `apiVersion`, `kind` and `metadata` included.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

// Comparing, reading and writing JSON content is kept out of line (`inline(never)`): `Object`'s
// own comparison, decoding and printing are on the page's first-load path, and these bodies are
// only ever run once custom resources exist, so they belong in the page's lazy part.
impl PartialEq for CustomResourceDefinition {
    #[inline(never)]
    fn eq(&self, other: &Self) -> bool {
        self.metadata == other.metadata && self.content == other.content
    }
}

impl PartialEq for CustomObject {
    #[inline(never)]
    fn eq(&self, other: &Self) -> bool {
        self.metadata == other.metadata && self.body == other.body
    }
}

impl Serialize for CustomResourceDefinition {
    #[inline(never)]
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("metadata", &self.metadata)?;
        for (k, v) in self.content.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl Serialize for CustomObject {
    #[inline(never)]
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("apiVersion", self.api_version())?;
        map.serialize_entry("kind", self.kind())?;
        map.serialize_entry("metadata", &self.metadata)?;
        for (k, v) in self.body.content.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// What `kubectl explain` shows of these kinds: metadata as every object's, and the rest as the
/// definition says (for a definition, apiextensions' own types, which kubeloop reads as JSON).
fn json_part(name: &'static str, description: &'static str) -> Field {
    Field { name, description, required: false, schema: || Schema::Leaf("object", ""), list: "", patch: "", format: "" }
}

fn metadata() -> Field {
    Field {
        name: "metadata",
        description: "Standard object's metadata.",
        required: false,
        schema: <ObjectMeta as Describe>::schema,
        list: "",
        patch: "",
        format: "",
    }
}

fn definition_body() -> Schema {
    Schema::Object(Struct {
        fields: vec![
            metadata(),
            json_part("spec", "The resource being defined: its group, names, scope and versions, each with a schema."),
            json_part("status", "The names accepted and the conditions (NamesAccepted, Established, Terminating)."),
        ],
    })
}

fn custom_body() -> Schema {
    Schema::Object(Struct {
        fields: vec![
            metadata(),
            json_part("spec", "What its definition's schema says."),
            json_part("status", "What its definition's schema says."),
        ],
    })
}

impl Describe for CustomResourceDefinition {
    fn schema() -> Schema {
        Schema::Named(Named {
            package: "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
            name: "CustomResourceDefinition",
            description: "A resource of the API server's, defined at run time.",
            body: definition_body,
        })
    }
}

impl Describe for CustomObject {
    fn schema() -> Schema {
        Schema::Named(Named {
            package: "io.kubeloop.custom",
            name: "CustomObject",
            description: "An object of a resource a CustomResourceDefinition defines.",
            body: custom_body,
        })
    }
}

/// The top-level fields other than the type and the metadata.
fn content_of(v: &Value) -> Decoded<(ObjectMeta, Content)> {
    let Value::Object(map) = v else { return Err(invalid_type(v, "a map")) };
    let metadata = match map.get("metadata") {
        None | Some(Value::Null) => ObjectMeta::default(),
        Some(m) => ObjectMeta::from_value(m)?,
    };
    let content = map
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok((metadata, content))
}

impl FromValue for CustomResourceDefinition {
    #[inline(never)]
    fn from_value(v: &Value) -> Decoded<Self> {
        let (metadata, content) = content_of(v)?;
        Ok(CustomResourceDefinition { metadata, content: Shared::new(content) })
    }
}

impl FromValue for CustomObject {
    #[inline(never)]
    fn from_value(v: &Value) -> Decoded<Self> {
        let (metadata, content) = content_of(v)?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        Ok(CustomObject::new(&text("apiVersion"), &text("kind"), metadata, content))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_custom_object_reads_and_writes_its_fields_as_they_came() {
        let v = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "a"}, "spec": {"x": [1, "two"]}});
        let o = CustomObject::from_value(&v).unwrap();
        assert_eq!(
            (o.api_version(), o.kind(), o.group(), o.metadata.name.as_str()),
            ("stable.example.com/v1", "CronTab", "stable.example.com", "a")
        );
        assert_eq!(o.to_value(), v);
        assert!(CustomObject::from_value(&json!([1])).is_err());
    }

    #[test]
    fn a_definition_finds_its_conditions() {
        let v = json!({"metadata": {"name": "a.b.c"}, "spec": {}, "status": {"conditions": [{"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "m"}]}});
        let crd = CustomResourceDefinition::from_value(&v).unwrap();
        assert_eq!(crd.condition("Established"), Some(("True", "InitialNamesAccepted", "m")));
        assert_eq!(crd.condition("Terminating"), None);
    }
}
