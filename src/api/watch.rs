//! Watch fan-out: which open watches see a committed change, found through indexes.
//!
//! A kubelet watches only the pods bound to its node (`spec.nodeName=NODE`). Looking each change
//! up by node name, instead of testing every open watch, keeps one pod write O(1) in the number
//! of nodes, as the real API server's watch cache indexes do.

use crate::model::{FieldSelector, Kind, LabelSelector, Object};
use crate::runtime::fasthash::FastMap;
use crate::store::{Change, ChangeType};
use std::collections::BTreeMap;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WatchId(pub u64);

/// The field selectors kubeloop's clients use.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum FieldFilter {
    #[default]
    All,
    /// `spec.nodeName=NODE` on pods.
    NodeName(String),
    /// `metadata.name=NAME`.
    Name(String),
}

impl FieldFilter {
    pub fn matches(&self, object: &Object) -> bool {
        match self {
            FieldFilter::All => true,
            FieldFilter::NodeName(node) => object.as_pod().and_then(|p| p.node_name()) == Some(node.as_str()),
            FieldFilter::Name(name) => object.meta().name == *name,
        }
    }
}

/// What narrows a client's watch beyond the field indexes: its namespace and any field selector
/// (an HTTP client's `fieldSelector` may name any field the kind supports). Checked, like the
/// label selector, on the candidates the indexes find.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Narrowing {
    pub namespace: Option<String>,
    pub fields: FieldSelector,
}

impl Narrowing {
    fn admits(&self, object: &Object) -> bool {
        self.namespace.as_deref().is_none_or(|ns| object.meta().namespace == ns)
            && (self.fields == FieldSelector::default() || self.fields.matches(&object.to_json()))
    }
}

/// One notification on one watch.
#[derive(Clone, Debug)]
pub struct WatchEvent {
    pub type_: ChangeType,
    pub object: Rc<Object>,
}

#[derive(Debug, Default)]
pub struct WatchRegistry {
    next: u64,
    /// Every open watch. Hashed: it is looked up for each candidate of each change and for each
    /// notification delivered, and listed (in id order) only by `open_ids`.
    specs: FastMap<WatchId, (Kind, FieldFilter)>,
    /// Label selectors of the watches that have one (checked after the field index).
    /// (With an outside client's namespace and field selector: one map for both, so that the
    /// page, whose watches have none, carries no second map's code.)
    labels: FastMap<WatchId, (Option<LabelSelector>, Narrowing)>,
    /// The custom resource a watch of custom objects is narrowed to (checked like labels).
    resources: FastMap<WatchId, crate::model::Name>,
    /// Unfiltered watches per kind.
    all: BTreeMap<Kind, Vec<WatchId>>,
    /// Filtered watches, looked up by the field value a change carries (by kind, then by the
    /// node name or the object name), so a change finds them without building a key.
    by_node: BTreeMap<Kind, FastMap<String, Vec<WatchId>>>,
    by_name: BTreeMap<Kind, FastMap<String, Vec<WatchId>>>,
}

impl WatchRegistry {
    /// Opens a watch narrowed by a label selector as well as a field selector.
    pub fn open_with_labels(&mut self, kind: Kind, filter: FieldFilter, labels: Option<LabelSelector>) -> WatchId {
        let id = self.open(kind, filter);
        if let Some(selector) = labels {
            self.labels.insert(id, (Some(selector), Narrowing::default()));
        }
        id
    }

    /// Opens a watch narrowed by a namespace and field selector too (a client outside the
    /// simulation: `kubeloop serve`'s HTTP watches).
    pub fn open_narrowed(&mut self, kind: Kind, labels: Option<LabelSelector>, narrowing: Narrowing) -> WatchId {
        let id = self.open(kind, FieldFilter::All);
        self.labels.insert(id, (labels, narrowing));
        id
    }

    pub fn open(&mut self, kind: Kind, filter: FieldFilter) -> WatchId {
        self.next += 1;
        let id = WatchId(self.next);
        match &filter {
            FieldFilter::All => self.all.entry(kind).or_default().push(id),
            FieldFilter::NodeName(node) => self.by_node.entry(kind).or_default().entry(node.clone()).or_default().push(id),
            FieldFilter::Name(name) => self.by_name.entry(kind).or_default().entry(name.clone()).or_default().push(id),
        }
        self.specs.insert(id, (kind, filter));
        id
    }

    /// Narrows an open watch of custom objects to one resource (a definition's name).
    pub fn narrow_to_resource(&mut self, id: WatchId, resource: crate::model::Name) {
        self.resources.insert(id, resource);
    }

    pub fn close(&mut self, id: WatchId) {
        let Some((kind, filter)) = self.specs.remove(&id) else { return };
        self.labels.remove(&id);
        self.resources.remove(&id);
        let list = match filter {
            FieldFilter::All => self.all.get_mut(&kind),
            FieldFilter::NodeName(node) => self.by_node.get_mut(&kind).and_then(|m| m.get_mut(&node)),
            FieldFilter::Name(name) => self.by_name.get_mut(&kind).and_then(|m| m.get_mut(&name)),
        };
        if let Some(list) = list {
            list.retain(|w| *w != id);
        }
    }

    /// Stops sending on an unfiltered watch while it stays open: its client reads the changes
    /// from elsewhere (kube-proxy's shared cache, `proxy::shared`). It still ends, is severed and
    /// answers `is_open` like any other watch.
    pub fn mute(&mut self, id: WatchId) {
        if let Some((kind, FieldFilter::All)) = self.specs.get(&id) {
            if let Some(list) = self.all.get_mut(kind) {
                list.retain(|w| *w != id);
            }
        }
    }

    pub fn is_open(&self, id: WatchId) -> bool {
        self.specs.contains_key(&id)
    }

    pub fn spec(&self, id: WatchId) -> Option<&(Kind, FieldFilter)> {
        self.specs.get(&id)
    }

    /// The open watches, in id order.
    pub fn open_ids(&self) -> impl Iterator<Item = WatchId> + '_ {
        let mut ids: Vec<WatchId> = self.specs.keys().copied().collect();
        ids.sort();
        ids.into_iter()
    }

    /// Who sees `change`, and as what. A filtered watch sees an object enter its filter as ADDED
    /// and leave it as DELETED, as the API server's watch cache reports it.
    pub fn fan_out(&self, change: &Change) -> Vec<(WatchId, WatchEvent)> {
        let kind = change.object.kind();
        let mut out: Vec<(WatchId, WatchEvent)> = Vec::new();
        // Each open watch is listed under one filter, and the two node names are distinct, so
        // no watch is a candidate twice.
        let candidates = self
            .all
            .get(&kind)
            .into_iter()
            .flatten()
            .chain(candidate_ids(&self.by_name, kind, Some(change.object.meta().name.as_str())))
            .chain(candidate_ids(&self.by_node, kind, node_of(&change.object)))
            .chain(candidate_ids(
                &self.by_node,
                kind,
                change.prev.as_deref().and_then(node_of).filter(|n| Some(*n) != node_of(&change.object)),
            ));
        for &id in candidates {
            let Some((_, filter)) = self.specs.get(&id) else { continue };
            if let Some(resource) = self.resources.get(&id) {
                if change.object.as_custom_object().is_none_or(|o| o.resource() != resource.as_str()) {
                    continue;
                }
            }
            let selected = self.labels.get(&id);
            let member = |o: &Object| {
                filter.matches(o)
                    && selected.is_none_or(|(labels, narrowing)| {
                        labels.as_ref().is_none_or(|s| s.matches(&o.meta().labels)) && narrowing.admits(o)
                    })
            };
            let now_in = change.type_ != ChangeType::Deleted && member(&change.object);
            let was_in = match (&change.prev, change.type_) {
                (Some(prev), ChangeType::Modified) => member(prev),
                (_, ChangeType::Deleted) => member(&change.object),
                _ => false,
            };
            let type_ = match (was_in, now_in) {
                (false, true) => ChangeType::Added,
                (true, true) => ChangeType::Modified,
                (true, false) => ChangeType::Deleted,
                (false, false) => continue,
            };
            out.push((id, WatchEvent { type_, object: change.object.clone() }));
        }
        out.sort_by_key(|(id, _)| *id);
        out
    }
}

/// The node a pod is bound to, which its `spec.nodeName` watches are listed under.
fn node_of(o: &Object) -> Option<&str> {
    o.as_pod().and_then(|p| p.node_name())
}

/// The watches of `kind` listed under `value` in one of the field indexes.
fn candidate_ids<'a>(
    index: &'a BTreeMap<Kind, FastMap<String, Vec<WatchId>>>,
    kind: Kind,
    value: Option<&str>,
) -> impl Iterator<Item = &'a WatchId> + 'a {
    value.and_then(|v| index.get(&kind)?.get(v)).into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ObjectMeta, Pod, PodSpec};

    fn pod(node: Option<&str>) -> Rc<Object> {
        Rc::new(Object::Pod(Pod {
            metadata: ObjectMeta { name: "p".into(), namespace: "default".into(), ..Default::default() },
            spec: PodSpec { node_name: node.map(str::to_string), ..Default::default() }.into(),
            ..Default::default()
        }))
    }

    #[test]
    fn a_kubelet_watch_sees_a_pod_arrive_when_it_is_bound_to_its_node() {
        let mut reg = WatchRegistry::default();
        let all = reg.open(Kind::Pod, FieldFilter::All);
        let node_a = reg.open(Kind::Pod, FieldFilter::NodeName("a".into()));
        let node_b = reg.open(Kind::Pod, FieldFilter::NodeName("b".into()));
        let created = Change { revision: 1, type_: ChangeType::Added, object: pod(None), prev: None };
        let seen: Vec<WatchId> = reg.fan_out(&created).into_iter().map(|(id, _)| id).collect();
        assert_eq!(seen, vec![all]);
        let bound = Change { revision: 2, type_: ChangeType::Modified, object: pod(Some("a")), prev: Some(pod(None)) };
        let events = reg.fan_out(&bound);
        assert_eq!(events.len(), 2);
        assert_eq!(events[1].0, node_a);
        assert_eq!(events[1].1.type_, ChangeType::Added);
        assert!(events.iter().all(|(id, _)| *id != node_b));
        reg.close(node_a);
        assert_eq!(reg.fan_out(&bound).len(), 1);
    }

    #[test]
    fn a_muted_watch_stays_open_and_hears_nothing() {
        let mut reg = WatchRegistry::default();
        let (muted, heard) = (reg.open(Kind::Pod, FieldFilter::All), reg.open(Kind::Pod, FieldFilter::All));
        reg.mute(muted);
        let created = Change { revision: 1, type_: ChangeType::Added, object: pod(None), prev: None };
        let seen: Vec<WatchId> = reg.fan_out(&created).into_iter().map(|(id, _)| id).collect();
        assert_eq!((seen, reg.is_open(muted)), (vec![heard], true));
        reg.close(muted);
        assert!(!reg.is_open(muted));
    }

    #[test]
    fn a_label_selected_watch_sees_an_object_leave_its_selection_as_deleted() {
        let mut reg = WatchRegistry::default();
        let selector = LabelSelector { match_labels: [("app".to_string(), "web".to_string())].into(), ..Default::default() };
        let web = reg.open_with_labels(Kind::Pod, FieldFilter::All, Some(selector));
        let labelled = |app: &str| {
            let mut p = (*pod(None)).clone();
            p.meta_mut().labels.insert("app".into(), app.into());
            Rc::new(p)
        };
        let relabel = Change { revision: 3, type_: ChangeType::Modified, object: labelled("db"), prev: Some(labelled("web")) };
        let events = reg.fan_out(&relabel);
        assert_eq!(events.len(), 1);
        assert_eq!((events[0].0, events[0].1.type_), (web, ChangeType::Deleted));
        let other = Change { revision: 4, type_: ChangeType::Added, object: labelled("db"), prev: None };
        assert!(reg.fan_out(&other).is_empty());
    }
}
