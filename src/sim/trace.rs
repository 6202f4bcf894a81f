//! The message trace: every request, response, etcd write and watch notification, in order.
//!
//! The page animates the recent messages; tests compare the hash of the whole stream to prove two
//! runs were the same. The hash is FNV-1a over a fixed text form, so it is identical natively and
//! in wasm32 (no std `Hash`, whose output may differ between builds).

use crate::model::Time;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt::{Arguments, Display, Write};

fn fnv(hash: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *hash ^= u64::from(*b);
        *hash = hash.wrapping_mul(FNV_PRIME);
    }
}

/// Feeds `n` in decimal, the bytes `Display` writes, without the formatting machinery (two
/// times per message, on every hop of a large run).
fn fnv_decimal(hash: &mut u64, n: u64) {
    let mut digits = [0u8; 20];
    fnv(hash, decimal_digits(n, &mut digits));
}

/// `n` in decimal, as `Display` writes it, in the tail of `digits` (a u64 has at most 20).
pub(crate) fn decimal_digits(mut n: u64, digits: &mut [u8; 20]) -> &[u8] {
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &digits[start..]
}

/// Feeds formatted text into the FNV-1a state.
struct Fnv<'a>(&'a mut u64);

impl Write for Fnv<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        fnv(self.0, s.as_bytes());
        Ok(())
    }
}

/// What kind of hop a message is, for the legend's colours and shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MessageKind {
    Request,
    Response,
    EtcdWrite,
    Watch,
}

/// One hop between two components, sent at `sent` and arriving at `arrives`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Message {
    pub seq: u64,
    pub sent: Time,
    pub arrives: Time,
    pub from: String,
    pub to: String,
    pub kind: MessageKind,
    /// `create pod/default/web-x`, `ADDED pod/default/web-x`, `201`, `rev 42`.
    pub what: String,
    /// The object the message is about (`pod/default/web-x`), for highlighting a pod's chain.
    pub object: String,
}

#[derive(Debug)]
pub struct Trace {
    recent: VecDeque<Message>,
    capacity: usize,
    count: u64,
    hash: u64,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

impl Trace {
    pub fn new(capacity: usize) -> Self {
        Trace { recent: VecDeque::new(), capacity, count: 0, hash: FNV_OFFSET }
    }

    // One flat call per hop keeps the hot path free of temporary structs.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        sent: Time,
        arrives: Time,
        from: &dyn Display,
        to: &dyn Display,
        kind: MessageKind,
        what: Arguments,
        object: &dyn Display,
    ) {
        self.count += 1;
        // Hashed straight from the formatter: no string is built unless the message is kept.
        fnv_decimal(&mut self.hash, sent.0);
        fnv(&mut self.hash, b"|");
        fnv_decimal(&mut self.hash, arrives.0);
        fnv(&mut self.hash, b"|");
        let _ = write!(Fnv(&mut self.hash), "{from}|{to}|{what}|");
        if self.capacity == 0 {
            return;
        }
        if self.recent.len() == self.capacity {
            self.recent.pop_front();
        }
        let msg = Message {
            seq: self.count,
            sent,
            arrives,
            from: from.to_string(),
            to: to.to_string(),
            kind,
            what: what.to_string(),
            object: object.to_string(),
        };
        self.recent.push_back(msg);
    }

    /// `record` for a hop whose texts are already in hand: the same hash, fed byte by byte
    /// without the formatting machinery, which cost more than everything else a hop does in a
    /// large run. Kept messages still go through `record`.
    #[allow(clippy::too_many_arguments)]
    pub fn record_text(&mut self, sent: Time, arrives: Time, from: &str, to: &str, kind: MessageKind, what: &str, object: &dyn Display) {
        if self.capacity > 0 {
            return self.record(sent, arrives, &from, &to, kind, format_args!("{what}"), object);
        }
        self.count += 1;
        let hash = &mut self.hash;
        fnv_decimal(hash, sent.0);
        fnv(hash, b"|");
        fnv_decimal(hash, arrives.0);
        for text in [from, to, what] {
            fnv(hash, b"|");
            fnv(hash, text.as_bytes());
        }
        fnv(hash, b"|");
    }

    fn absorb(&mut self, bytes: &[u8]) {
        fnv(&mut self.hash, bytes);
    }

    /// Folds something that is not a message (a user command, an event) into the hash.
    pub fn absorb_text(&mut self, text: &str) {
        self.absorb(text.as_bytes());
        self.absorb(b"\n");
    }

    /// The same running hash and count, keeping at most `capacity` recent messages from now on.
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        while self.recent.len() > capacity {
            self.recent.pop_front();
        }
        self
    }

    pub fn hash(&self) -> u64 {
        self.hash
    }
    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn recent(&self) -> impl Iterator<Item = &Message> {
        self.recent.iter()
    }
    /// Messages with a sequence number above `seq` (for the page to pick up what is new).
    pub fn since(&self, seq: u64) -> impl Iterator<Item = &Message> {
        let skip = self.recent.partition_point(|m| m.seq <= seq);
        self.recent.range(skip..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_hash_as_their_decimal_text() {
        for n in [0u64, 7, 10, 1234, u64::MAX] {
            let (mut fast, mut text) = (FNV_OFFSET, FNV_OFFSET);
            fnv_decimal(&mut fast, n);
            fnv(&mut text, n.to_string().as_bytes());
            assert_eq!(fast, text, "{n}");
        }
    }

    #[test]
    fn a_message_hashes_as_its_text_form() {
        let mut trace = Trace::new(0);
        trace.record(
            Time(12),
            Time(3456),
            &"kubectl",
            &"kube-apiserver",
            MessageKind::Request,
            format_args!("create {}", "pod/default/web"),
            &"",
        );
        let mut expected = FNV_OFFSET;
        fnv(&mut expected, b"12|3456|kubectl|kube-apiserver|create pod/default/web|");
        assert_eq!((trace.hash(), trace.count()), (expected, 1));
    }

    #[test]
    fn a_message_in_hand_hashes_as_if_formatted_and_is_kept_the_same_way() {
        for capacity in [0, 4] {
            let (mut formatted, mut text) = (Trace::new(capacity), Trace::new(capacity));
            formatted.record(
                Time(5),
                Time(9),
                &"kubelet-node-1",
                &"kube-apiserver",
                MessageKind::Request,
                format_args!("bind {}", "pod/x"),
                &"pod/x",
            );
            text.record_text(Time(5), Time(9), "kubelet-node-1", "kube-apiserver", MessageKind::Request, "bind pod/x", &"pod/x");
            assert_eq!((text.hash(), text.count()), (formatted.hash(), formatted.count()), "capacity {capacity}");
            assert_eq!(text.recent().collect::<Vec<_>>(), formatted.recent().collect::<Vec<_>>());
        }
    }
}
