//! The delivery queue: a four-ary min-heap of (time, sequence) keys.
//!
//! Every message, notification and wake-up of a run passes through it, and at scale it holds
//! hundreds of thousands of entries. A binary heap's pop walks log₂ n levels, each a likely cache
//! miss; with four children per node the walk is half as deep and the four children sit next to
//! each other. Keys are unique (the sequence number breaks ties), so any correct heap pops the
//! same order: the trace cannot tell one from the other.

/// One queued entry: due at `at`, queued `seq`-th, standing for the delivery parked at `parked`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Queued {
    pub at: u64,
    pub seq: u64,
    pub parked: usize,
}

impl Queued {
    fn before(&self, other: &Queued) -> bool {
        (self.at, self.seq) < (other.at, other.seq)
    }
}

#[derive(Debug, Default)]
pub(super) struct DeliveryQueue {
    heap: Vec<Queued>,
}

impl DeliveryQueue {
    pub fn push(&mut self, entry: Queued) {
        self.heap.push(entry);
        let mut at = self.heap.len() - 1;
        while at > 0 {
            let parent = (at - 1) / 4;
            if !self.heap[at].before(&self.heap[parent]) {
                break;
            }
            self.heap.swap(at, parent);
            at = parent;
        }
    }

    /// The earliest entry.
    pub fn peek(&self) -> Option<&Queued> {
        self.heap.first()
    }

    /// Takes the earliest entry out.
    pub fn pop(&mut self) -> Option<Queued> {
        if self.heap.is_empty() {
            return None;
        }
        let first = self.heap.swap_remove(0);
        let len = self.heap.len();
        let mut at = 0;
        loop {
            let children = 4 * at + 1;
            if children >= len {
                break;
            }
            let mut least = children;
            for child in children + 1..(children + 4).min(len) {
                if self.heap[child].before(&self.heap[least]) {
                    least = child;
                }
            }
            if !self.heap[least].before(&self.heap[at]) {
                break;
            }
            self.heap.swap(at, least);
            at = least;
        }
        Some(first)
    }

    /// Every entry, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Queued> {
        self.heap.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_leave_by_time_then_by_sequence() {
        let mut q = DeliveryQueue::default();
        // A scrambled order of 200 entries over 7 distinct times.
        let mut entries: Vec<Queued> = (0..200u64).map(|seq| Queued { at: (seq * 37) % 7, seq, parked: seq as usize }).collect();
        entries.reverse();
        entries.rotate_left(61);
        for e in &entries {
            q.push(*e);
        }
        assert_eq!(q.peek().map(|e| (e.at, e.seq)), Some((0, 0)));
        let mut popped = Vec::new();
        while let Some(e) = q.pop() {
            popped.push((e.at, e.seq));
        }
        let mut expected: Vec<(u64, u64)> = entries.iter().map(|e| (e.at, e.seq)).collect();
        expected.sort();
        assert_eq!(popped, expected);
        assert_eq!(q.iter().count(), 0);
    }
}
