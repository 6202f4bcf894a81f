//! The simulation's side of kube-proxies sharing one Service and EndpointSlice watch
//! (`proxy::shared`): deciding which watches are shared, feeding the one cache, waking the
//! kube-proxies that wait for its next change, and handing their watches back when a fault
//! covers them.
//!
//! It exists because every node's kube-proxy watching every Service and EndpointSlice makes each
//! slice write cost one delivery per node, which past a few hundred nodes is most of the run.
//! Below `SHARED_PROXY_WATCH_NODES` nodes nothing is shared, so teaching-scale runs (and their
//! traces: each kube-proxy's own watch notifications are hops a learner sees) are unchanged.

use super::{ComponentId, Sim, SlotIndex};
use crate::api::{WatchEvent, WatchId};
use crate::model::Kind;
use crate::proxy::shared::KINDS;
use crate::sim::trace::MessageKind;

/// From this many nodes on, kube-proxies' Service and EndpointSlice watches are shared (unless
/// `Sim::share_kube_proxy_watches` says otherwise). Built-in scenarios and lessons have a handful
/// of nodes; the page draws a node box each up to about this many.
pub const SHARED_PROXY_WATCH_NODES: u32 = 50;

impl Sim {
    /// Whether kube-proxies' watches opened from now on are shared: always (`Some(true)`), never
    /// (`Some(false)`), or from `SHARED_PROXY_WATCH_NODES` nodes on (`None`, the default).
    /// Watches already open keep their kind until they end.
    pub fn share_kube_proxy_watches(&mut self, share: Option<bool>) {
        self.share_proxy_watches = share;
    }

    /// The kube-proxies reading the shared cache now, by node (the others read their own).
    pub fn kube_proxies_sharing_watches(&self) -> Vec<&str> {
        (0..self.components.len())
            .filter(|&i| self.reads_shared_cache(i))
            .filter_map(|i| match &self.components[i].id {
                ComponentId::KubeProxy(node) => Some(node.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Whether a watch the component in this place opens now is shared: it is a kube-proxy,
    /// sharing is on and no watch fault covers it.
    pub(super) fn offers_shared_watch(&self, index: SlotIndex) -> bool {
        let id = &self.components[index].id;
        matches!(id, ComponentId::KubeProxy(_)) && self.shares_proxy_watches() && self.watch_fault_for(id).is_none()
    }

    fn shares_proxy_watches(&self) -> bool {
        self.share_proxy_watches.unwrap_or(self.nodes_added >= SHARED_PROXY_WATCH_NODES)
    }

    /// Whether the kube-proxy in this place reads the shared cache: both its watches are open and
    /// shared, and so is the cache's own.
    pub(super) fn reads_shared_cache(&self, index: SlotIndex) -> bool {
        self.shared_proxy.watches().is_some()
            && self.components[index].shared_watches.iter().all(|w| w.is_some_and(|w| self.api.is_watch_open(w)))
    }

    /// A watch just opened for `from`: if it is a kube-proxy's Service or EndpointSlice watch,
    /// sharing is on and no watch fault covers it, kube-apiserver stops sending on it and the
    /// kube-proxy reads the shared cache instead (once both its watches are shared).
    pub(super) fn share_if_kube_proxy(&mut self, from: SlotIndex, kind: Kind, watch: WatchId) {
        let Some(slot) = KINDS.iter().position(|k| *k == kind) else { return };
        if !self.offers_shared_watch(from) {
            return;
        }
        self.open_shared_cache();
        self.api.watches.mute(watch);
        self.components[from].shared_watches[slot] = Some(watch);
    }

    /// Opens the shared cache's own watches if they are not open, from a list of what etcd holds
    /// now (kube-apiserver's watch cache): the re-list after every watch ended.
    fn open_shared_cache(&mut self) {
        if self.shared_proxy.watches().is_some_and(|ws| ws.iter().all(|w| self.api.is_watch_open(*w))) {
            return;
        }
        self.close_shared_cache();
        let watches = KINDS.map(|kind| self.api.watches.open(kind, crate::api::FieldFilter::All));
        let lists = KINDS.map(|kind| self.api.items(kind, None).cloned().collect());
        self.shared_proxy.relist(watches, lists);
    }

    /// Ends the shared cache's watches (every watch is ending): it is re-listed before it is read
    /// again.
    pub(super) fn close_shared_cache(&mut self) {
        for w in self.shared_proxy.watches().into_iter().flatten() {
            self.api.close_watch(w);
        }
        self.shared_proxy.close();
    }

    /// A notification on the shared watch: traced once (to every sharing kube-proxy), applied to
    /// the cache, and heard by each kube-proxy waiting for a change.
    pub(super) fn deliver_shared(&mut self, watch: WatchId, event: WatchEvent) {
        self.text.clear();
        self.text.push_str(event.type_.as_str());
        self.text.push(' ');
        super::push_object_key(&mut self.text, &event.object);
        self.trace.record_text(self.now, self.now, "kube-apiserver", "kube-proxy", MessageKind::Watch, &self.text, &event.object.key_ref());
        self.shared_proxy.apply(watch, event);
        for index in std::mem::take(&mut self.shared_waiters) {
            self.components[index].awaiting_shared = false;
            if self.is_running_at(index) && self.reads_shared_cache(index) {
                self.call_at(index, |c, ctx| c.handle_shared_change(ctx));
            }
        }
    }

    /// A watch fault changed: each kube-proxy reading the shared cache that a fault now covers
    /// has its watches ended, so that it re-opens them private and the fault applies to it alone.
    pub(super) fn unshare_faulted_kube_proxies(&mut self) {
        let faulted: Vec<bool> = (0..self.components.len())
            .map(|i| self.reads_shared_cache(i) && self.watch_fault_for(&self.components[i].id).is_some())
            .collect();
        if faulted.contains(&true) {
            self.sever_watches_of(&faulted);
        }
    }
}
