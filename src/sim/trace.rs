//! The message trace: every request, response, etcd write and watch notification, in order.
//!
//! The page animates the recent messages; tests compare the hash of the whole stream to prove two
//! runs were the same. The hash is taken a word at a time over a message's times and texts, so it
//! is identical natively and in wasm32 (no std `Hash`, whose output may differ between builds).

use crate::model::Time;
use crate::runtime::fasthash::FxHasher;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt::{Arguments, Display, Write};
use std::hash::Hasher;

/// The running hash of a trace: the simulation's Fx hasher (`runtime::fasthash`, a rotate, xor
/// and multiply per 64-bit word) over each message's two times and three texts, each text
/// preceded by its length so that where one ends is part of the hash. Byte at a time (FNV-1a
/// over a `|`-joined text form, as before) it was a twentieth of a large run's instructions.
#[derive(Clone, Copy, Debug)]
struct TraceHash(FxHasher);

impl TraceHash {
    /// Started from a word that is not zero: from zero, an empty text (a zero word) would leave
    /// the state at zero and so not count.
    fn new() -> Self {
        let mut hasher = FxHasher::default();
        hasher.write_u64(0xcbf2_9ce4_8422_2325);
        TraceHash(hasher)
    }

    fn number(&mut self, n: u64) {
        self.0.write_u64(n);
    }

    fn text(&mut self, bytes: &[u8]) {
        // Length first: after the text, a length word can cancel the text's own length tag.
        self.0.write_usize(bytes.len());
        self.0.write(bytes);
    }

    /// One message: its two times and its three texts.
    fn message(&mut self, sent: Time, arrives: Time, from: &str, to: &str, what: &str) {
        self.number(sent.0);
        self.number(arrives.0);
        for text in [from, to, what] {
            self.text(text.as_bytes());
        }
    }

    fn value(&self) -> u64 {
        self.0.finish()
    }
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
    hash: TraceHash,
    /// Where `record` writes a message's texts before hashing them (reused, so a message that
    /// is not kept allocates nothing once it has grown).
    scratch: String,
}

impl Trace {
    pub fn new(capacity: usize) -> Self {
        Trace { recent: VecDeque::new(), capacity, count: 0, hash: TraceHash::new(), scratch: String::new() }
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
        let mut texts = std::mem::take(&mut self.scratch);
        texts.clear();
        let _ = write!(texts, "{from}");
        let from_end = texts.len();
        let _ = write!(texts, "{to}");
        let to_end = texts.len();
        let _ = write!(texts, "{what}");
        let (from, rest) = texts.split_at(from_end);
        let (to, what) = rest.split_at(to_end - from_end);
        self.record_text(sent, arrives, from, to, kind, what, object);
        self.scratch = texts;
    }

    /// `record` for a hop whose texts are already in hand, without the formatting machinery,
    /// which cost more than everything else a hop does in a large run.
    #[allow(clippy::too_many_arguments)]
    pub fn record_text(&mut self, sent: Time, arrives: Time, from: &str, to: &str, kind: MessageKind, what: &str, object: &dyn Display) {
        self.count += 1;
        self.hash.message(sent, arrives, from, to, what);
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

    /// Folds something that is not a message (a user command, an event) into the hash.
    pub fn absorb_text(&mut self, text: &str) {
        self.hash.text(text.as_bytes());
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
        self.hash.value()
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
    fn decimal_digits_are_the_display_text() {
        for n in [0u64, 7, 10, 1234, u64::MAX] {
            let mut digits = [0u8; 20];
            assert_eq!(decimal_digits(n, &mut digits), n.to_string().as_bytes(), "{n}");
        }
    }

    #[test]
    fn every_byte_and_every_boundary_between_texts_counts() {
        let hash_of = |texts: &[&[u8]]| {
            let mut h = TraceHash::new();
            for t in texts {
                h.text(t);
            }
            h.value()
        };
        let text: &[u8] = b"create pod/default/web-7c5ddbdf54-x7k2p";
        let mut seen = vec![hash_of(&[text])];
        for i in 0..text.len() {
            let mut changed = text.to_vec();
            changed[i] ^= 1;
            seen.push(hash_of(&[&changed]));
            seen.push(hash_of(&[&text[..i]]));
            seen.push(hash_of(&[&text[..i], &text[i..]]));
        }
        seen.extend([hash_of(&[b"a"]), hash_of(&[b"a\0"]), hash_of(&[])]);
        let count = seen.len();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), count, "two different sequences of texts hashed alike");
    }

    #[test]
    fn a_message_hashes_as_its_times_and_texts() {
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
        let mut expected = TraceHash::new();
        expected.message(Time(12), Time(3456), "kubectl", "kube-apiserver", "create pod/default/web");
        assert_eq!((trace.hash(), trace.count()), (expected.value(), 1));
        let mut absorbed = Trace::new(0);
        absorbed.absorb_text("kubectl scale deployment web --replicas=3");
        assert_ne!(absorbed.hash(), Trace::new(0).hash(), "a command changes the hash");
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
