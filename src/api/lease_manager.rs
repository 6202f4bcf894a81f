//! kube-apiserver's `--event-ttl`: every Event is put in etcd with a lease, so etcd deletes it
//! an hour after its last write (a repeat's count bump is a write, and renews it).
//!
//! Granting a lease per write would cost etcd a lease per Event, so kube-apiserver's storage
//! layer (apiserver `storage/etcd3/lease_manager.go`) reuses the lease it granted last for the
//! writes of the next minute: it asks for `ttl` plus a reuse window of 5% of the ttl, at most
//! `--lease-reuse-duration-seconds` (60 s), and reuses that lease while it still has at least
//! `ttl` to run but no more than `ttl` + the window, for at most 1000 writes. So an Event
//! disappears between 60 and 61 minutes after its last write, the exact time depending on when
//! the lease it was put with was granted.

use crate::model::{Duration, Time};
use crate::store::lease::LeaseId;
use crate::store::Etcd;

/// kube-apiserver's `--event-ttl` default: "Amount of time to retain events."
pub const EVENT_TTL: Duration = Duration::mins(60);

/// `--lease-reuse-duration-seconds` default: the longest a lease is reused for.
pub const LEASE_REUSE_DURATION: Duration = Duration::secs(60);

/// The reuse window as a share of the ttl, in percent (`newDefaultLeaseManager`: 0.05).
const LEASE_REUSE_PERCENT: u64 = 5;

/// The most writes one lease is reused for (`defaultLeaseMaxObjectCount`).
pub const LEASE_MAX_OBJECT_COUNT: u32 = 1000;

/// The one lease kube-apiserver is reusing, and how many writes it has served.
#[derive(Clone, Copy, Debug, Default)]
pub struct LeaseManager {
    previous: Option<(LeaseId, Time)>,
    attached: u32,
}

impl LeaseManager {
    /// `GetLease`: the lease for a write at `now` of an object that must live `ttl`, reusing
    /// the previous one when it expires neither too early nor too late, else granted afresh.
    pub fn lease_for(&mut self, now: Time, ttl: Duration, etcd: &mut Etcd) -> LeaseId {
        let reuse = Duration(ttl.0 * LEASE_REUSE_PERCENT / 100).min(LEASE_REUSE_DURATION);
        if let Some((id, expires)) = self.previous {
            let valid = now + ttl < expires && etcd.leases().is_live(id);
            let sufficient = now + Duration(ttl.0 + reuse.0) > expires;
            if valid && sufficient && self.attached < LEASE_MAX_OBJECT_COUNT {
                self.attached += 1;
                return id;
            }
        }
        let granted = Duration(ttl.0 + reuse.0);
        let id = etcd.grant_lease(now, granted);
        self.previous = Some((id, now + granted));
        self.attached = 1;
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ApiRequest, ApiServer, FieldFilter};
    use crate::model::{Event, Kind, Object, ObjectKey, ObjectMeta};
    use crate::rng::Rng;
    use crate::store::ChangeType;

    fn event(name: &str, count: i32) -> Object {
        let metadata = ObjectMeta { name: name.into(), namespace: "default".into(), ..Default::default() };
        Object::Event(Event { metadata, reason: "Scheduled".into(), count, ..Default::default() })
    }

    fn stored(api: &ApiServer, name: &str) -> bool {
        api.get(&ObjectKey::new(Kind::Event, "default", name)).is_some()
    }

    #[test]
    fn an_event_is_deleted_when_its_lease_runs_out_and_a_watcher_hears_deleted() {
        let (mut api, mut rng) = (ApiServer::new(), Rng::new(1));
        let watch = api.watches.open(Kind::Event, FieldFilter::All);
        api.handle(Time(0), &mut rng, ApiRequest::Create(event("a", 1)));
        api.handle(Time(0), &mut rng, ApiRequest::Create(event("b", 1)));
        let stale = api.get(&ObjectKey::new(Kind::Event, "default", "b")).cloned().unwrap();
        // A repeat bumps b's count 30 minutes on: a new lease, an hour from then.
        let mut repeat = (*stale).clone();
        if let Object::Event(e) = &mut repeat {
            e.count = 2;
        }
        assert!(api.handle(Time(0) + Duration::mins(30), &mut rng, ApiRequest::Update(repeat)).result.is_ok());
        assert_eq!(api.next_expiry(), Some(Time(0) + Duration::secs(3660)));
        assert!(api.expire_leases(Time(0) + Duration::secs(3659)).is_empty());
        let expired = api.expire_leases(Time(0) + Duration::secs(3660));
        assert_eq!(expired.len(), 1, "only a: b was written again with another lease");
        assert_eq!(expired[0].notifications.len(), 1);
        let (to, heard) = &expired[0].notifications[0];
        assert_eq!((*to, heard.type_, heard.object.meta().name.as_str()), (watch, ChangeType::Deleted, "a"));
        assert!(!stored(&api, "a") && stored(&api, "b"));
        assert!(api.expire_leases(Time(0) + Duration::secs(30 * 60 + 3659)).is_empty());
        assert_eq!(api.expire_leases(Time(0) + Duration::secs(30 * 60 + 3660)).len(), 1);
        assert!(!stored(&api, "b"));
        assert_eq!(api.next_expiry(), None);
    }

    #[test]
    fn an_event_deleted_and_created_again_is_not_taken_by_its_old_lease() {
        let (mut api, mut rng) = (ApiServer::new(), Rng::new(1));
        api.handle(Time(0), &mut rng, ApiRequest::Create(event("a", 1)));
        let key = ObjectKey::new(Kind::Event, "default", "a");
        assert!(api.handle(Time(1), &mut rng, ApiRequest::Delete(crate::api::DeleteRequest::new(key))).result.is_ok());
        // Two minutes on: the first lease is too short to reuse, so the new Event gets its own.
        api.handle(Time(0) + Duration::mins(2), &mut rng, ApiRequest::Create(event("a", 1)));
        assert!(api.expire_leases(Time(0) + Duration::secs(3660)).is_empty(), "the first lease holds only the deleted put");
        assert!(stored(&api, "a"));
        assert_eq!(api.expire_leases(Time(0) + Duration::secs(120 + 3660)).len(), 1);
    }

    #[test]
    fn other_kinds_are_put_without_a_lease() {
        let (mut api, mut rng) = (ApiServer::new(), Rng::new(1));
        let node =
            Object::Node(crate::model::Node { metadata: ObjectMeta { name: "node-1".into(), ..Default::default() }, ..Default::default() });
        assert!(api.handle(Time(0), &mut rng, ApiRequest::Create(node)).result.is_ok());
        assert_eq!((api.next_expiry(), api.etcd.leases().len()), (None, 0));
    }

    #[test]
    fn a_lease_is_reused_for_a_minute_of_writes_then_granted_afresh() {
        let mut etcd = Etcd::new();
        let mut manager = LeaseManager::default();
        let first = manager.lease_for(Time(0), EVENT_TTL, &mut etcd);
        assert_eq!(etcd.leases().expires(first), Some(Time(0) + Duration::secs(3660)), "ttl plus the 60 s reuse window");
        assert_eq!(manager.lease_for(Time(59_999), EVENT_TTL, &mut etcd), first);
        let second = manager.lease_for(Time(60_000), EVENT_TTL, &mut etcd);
        assert_ne!(second, first, "the first lease has less than the ttl left");
        assert_eq!(etcd.leases().expires(second), Some(Time(60_000) + Duration::secs(3660)));
    }

    #[test]
    fn a_lease_serves_at_most_a_thousand_writes() {
        let mut etcd = Etcd::new();
        let mut manager = LeaseManager::default();
        let first = manager.lease_for(Time(0), EVENT_TTL, &mut etcd);
        for _ in 1..LEASE_MAX_OBJECT_COUNT {
            assert_eq!(manager.lease_for(Time(5), EVENT_TTL, &mut etcd), first);
        }
        assert_ne!(manager.lease_for(Time(5), EVENT_TTL, &mut etcd), first);
    }

    #[test]
    fn a_short_ttl_reuses_its_lease_for_five_percent_of_it() {
        let mut etcd = Etcd::new();
        let mut manager = LeaseManager::default();
        let ttl = Duration::secs(100);
        let first = manager.lease_for(Time(0), ttl, &mut etcd);
        assert_eq!(etcd.leases().expires(first), Some(Time(105_000)));
        assert_eq!(manager.lease_for(Time(4_999), ttl, &mut etcd), first);
        assert_ne!(manager.lease_for(Time(5_000), ttl, &mut etcd), first);
    }
}
