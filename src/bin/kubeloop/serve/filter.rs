//! Which objects a list or a watch covers: its namespace, label selector and field selector,
//! parsed from the query as kube-apiserver parses them (the console's own selector parsers).

use kubeloop::command::selector::{parse_label_selector, FieldSelector};
use kubeloop::model::{Kind, LabelSelector, Object};

#[derive(Clone, Debug, Default)]
pub(crate) struct Filter {
    pub(crate) namespace: Option<String>,
    pub(crate) labels: Option<LabelSelector>,
    pub(crate) fields: FieldSelector,
}

impl Filter {
    /// From `labelSelector` and `fieldSelector`; the error is the 400's message.
    pub(crate) fn parse(kind: Kind, namespace: Option<String>, labels: Option<&str>, fields: Option<&str>) -> Result<Filter, String> {
        let labels = match labels.filter(|l| !l.trim().is_empty()) {
            Some(text) => Some(parse_label_selector(text).map_err(|e| e.trim_start_matches("error: ").to_string())?),
            None => None,
        };
        // `/v1, Resource=pods`, `apps/v1, Resource=deployments`: how the server names a resource.
        let group_version = if kind.info().group().is_empty() { "/v1" } else { kind.api_version() };
        let resource = format!("{group_version}, Resource={}", kind.plural());
        let fields = match fields {
            Some(text) => FieldSelector::parse(text, &resource, kind.info().field_labels).map_err(|e| strip_kubectl(&e))?,
            None => FieldSelector::default(),
        };
        Ok(Filter { namespace: namespace.filter(|_| kind.namespaced()), labels, fields })
    }

    /// For a custom resource (`resource` as the server names it: `example.com/v1,
    /// Resource=websites`), whose objects only `metadata.name` and `metadata.namespace` select.
    pub(crate) fn parse_custom(resource: &str, labels: Option<&str>, fields: Option<&str>) -> Result<Filter, String> {
        let labels = match labels.filter(|l| !l.trim().is_empty()) {
            Some(text) => Some(parse_label_selector(text).map_err(|e| e.trim_start_matches("error: ").to_string())?),
            None => None,
        };
        let fields = match fields {
            Some(text) => FieldSelector::parse(text, resource, &[]).map_err(|e| strip_kubectl(&e))?,
            None => FieldSelector::default(),
        };
        Ok(Filter { namespace: None, labels, fields })
    }

    pub(crate) fn admits(&self, o: &Object) -> bool {
        let meta = o.meta();
        self.namespace.as_deref().is_none_or(|ns| meta.namespace == ns)
            && self.labels.as_ref().is_none_or(|s| s.matches(&meta.labels))
            && (self.fields == FieldSelector::default() || self.fields.matches(&o.to_json()))
    }
}

/// The console's selector errors are printed the way kubectl prints a server's answer; the server
/// answers with the message alone.
fn strip_kubectl(text: &str) -> String {
    let text = text.trim_start_matches("error: ");
    text.split_once("): ").filter(|(head, _)| head.starts_with("Error from server (")).map_or(text, |(_, rest)| rest).to_string()
}
