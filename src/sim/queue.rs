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
        // The new entry rises through a hole: each level moves one parent down, no swaps.
        let mut hole = self.heap.len();
        self.heap.push(entry);
        while hole > 0 {
            let parent = (hole - 1) / 4;
            if !entry.before(&self.heap[parent]) {
                break;
            }
            self.heap[hole] = self.heap[parent];
            hole = parent;
        }
        self.heap[hole] = entry;
    }

    /// The earliest entry.
    pub fn peek(&self) -> Option<&Queued> {
        self.heap.first()
    }

    /// Takes the earliest entry out.
    pub fn pop(&mut self) -> Option<Queued> {
        let last = self.heap.pop()?;
        let Some(&first) = self.heap.first() else { return Some(last) };
        // The last entry sinks from the root through a hole, each level lifting its least child.
        let len = self.heap.len();
        let mut hole = 0;
        loop {
            let children = 4 * hole + 1;
            if children >= len {
                break;
            }
            let mut least = children;
            for child in children + 1..(children + 4).min(len) {
                if self.heap[child].before(&self.heap[least]) {
                    least = child;
                }
            }
            if !self.heap[least].before(&last) {
                break;
            }
            self.heap[hole] = self.heap[least];
            hole = least;
        }
        self.heap[hole] = last;
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

    #[test]
    fn pushes_between_pops_keep_the_order() {
        let mut q = DeliveryQueue::default();
        let mut seq = 0;
        let mut popped = Vec::new();
        for round in 0..50u64 {
            for k in 0..3 {
                seq += 1;
                q.push(Queued { at: round + (round * 7 + k) % 5, seq, parked: 0 });
            }
            popped.extend(q.pop().map(|e| (e.at, e.seq)));
        }
        while let Some(e) = q.pop() {
            popped.push((e.at, e.seq));
        }
        assert_eq!(popped.len(), 150);
        // Each pop takes the least entry queued at that moment: replayed with a sorted vector.
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut expected = Vec::new();
        let mut seq = 0;
        for round in 0..50u64 {
            for k in 0..3 {
                seq += 1;
                reference.push((round + (round * 7 + k) % 5, seq));
            }
            reference.sort();
            expected.push(reference.remove(0));
        }
        expected.extend(reference);
        assert_eq!(popped, expected);
    }
}
