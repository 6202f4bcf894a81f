//! Stable sorting compiled once, not once per element type.
//!
//! `slice::sort_by` is generic over the element and the comparator, so every call site with a new
//! type or closure gets its own copy of the standard library's driftsort (3–5 KB of wasm each);
//! twenty of them were a fifth of the page's sorting and B-tree code. These helpers sort a list of
//! indices with one comparator behind `dyn` — a single instantiation — and then move the elements
//! into that order with swaps, which is all that stays generic. The order is exactly what
//! `slice::sort_by` gives, equal elements included: the index sort is the same stable sort.
//!
//! `natural_cmp` is the order a person expects for names with numbers in them (`node-2` before
//! `node-10`), for what the page lists; kubectl's own output keeps the API server's key order.

use std::cmp::Ordering;

/// `v.sort_by(cmp)`, with the same (stable) result.
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let order = {
        let items: &[T] = v;
        stable_order(items.len(), &mut |a, b| cmp(&items[a], &items[b]))
    };
    apply_order(v, order);
}

/// `v.sort_by_key(key)`, with the same (stable) result.
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// `v.sort()`, with the same result.
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// Compares names as a person reads them: runs of digits by their number, the rest byte by
/// byte (`node-2` < `node-10` < `node-100`). Names equal that way (`node-02`, `node-2`) fall
/// back to plain text order, so this is a total order.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        if x[i].is_ascii_digit() && y[j].is_ascii_digit() {
            let (si, sj) = (i, j);
            while i < x.len() && x[i].is_ascii_digit() {
                i += 1;
            }
            while j < y.len() && y[j].is_ascii_digit() {
                j += 1;
            }
            // Without leading zeros, a longer run is a bigger number; equal lengths compare as text.
            let (n, m) = (trim_zeros(&x[si..i]), trim_zeros(&y[sj..j]));
            let by_number = n.len().cmp(&m.len()).then_with(|| n.cmp(m));
            if by_number != Ordering::Equal {
                return by_number;
            }
            continue;
        }
        if x[i] != y[j] {
            return x[i].cmp(&y[j]);
        }
        i += 1;
        j += 1;
    }
    (x.len() - i).cmp(&(y.len() - j)).then_with(|| a.cmp(b))
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let first = digits.iter().position(|&d| d != b'0').unwrap_or(digits.len());
    &digits[first..]
}

/// The positions `0..len` in stable sorted order: `order[i]` is the index of the element that
/// belongs at `i`. The one place the standard library's sort is instantiated.
fn stable_order(len: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

/// Moves the element at `order[i]` to `i` for every `i`, one permutation cycle at a time (O(n)
/// swaps). Each cycle is walked from its first position; visited positions are marked with
/// `usize::MAX` so each cycle is walked once.
fn apply_order<T>(v: &mut [T], mut order: Vec<usize>) {
    for start in 0..order.len() {
        let mut at = start;
        loop {
            let from = order[at];
            if from == usize::MAX {
                break;
            }
            order[at] = usize::MAX;
            if from == start {
                break;
            }
            // Invariant: the element first at `start` is now at `at`; `at` wants the one at `from`.
            v.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_library_and_keeps_equal_elements_in_order() {
        let mut seed = 7u64;
        for len in [0usize, 1, 2, 3, 5, 17, 64, 301] {
            let mut v: Vec<(u8, usize)> = (0..len)
                .map(|i| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((seed >> 59) as u8, i)
                })
                .collect();
            let mut expected = v.clone();
            expected.sort_by_key(|p| p.0);
            sort_by_key(&mut v, |p| p.0);
            assert_eq!(v, expected, "len {len}");
        }
    }

    #[test]
    fn sort_by_reverses_and_sort_orders_strings() {
        let mut v = vec![3, 1, 2, 5, 4];
        sort_by(&mut v, |a, b| b.cmp(a));
        assert_eq!(v, [5, 4, 3, 2, 1]);
        let mut s = vec!["web-b".to_string(), "api".into(), "web-a".into()];
        sort(&mut s);
        assert_eq!(s, ["api", "web-a", "web-b"]);
    }

    #[test]
    fn a_single_cycle_and_fixed_points_are_both_applied() {
        let mut v = vec!['a', 'b', 'c', 'd'];
        apply_order(&mut v, vec![2, 0, 1, 3]);
        assert_eq!(v, ['c', 'a', 'b', 'd']);
    }

    #[test]
    fn natural_order_reads_numbers_as_numbers() {
        let mut v = vec!["node-10", "node-2", "node-100", "node-1", "node-1a", "node-", "api", "node-9"];
        sort_by(&mut v, |a, b| natural_cmp(a, b));
        assert_eq!(v, ["api", "node-", "node-1", "node-1a", "node-2", "node-9", "node-10", "node-100"]);
        assert_eq!(natural_cmp("kubelet-node-2", "kubelet-node-10"), Ordering::Less);
        assert_eq!(natural_cmp("a2b10", "a2b9"), Ordering::Greater);
        assert_eq!(natural_cmp("n99999999999999999999999", "n100000000000000000000000"), Ordering::Less, "no overflow");
        // Equal as numbers, still a total order.
        assert_eq!(natural_cmp("node-02", "node-2"), "node-02".cmp("node-2"));
        assert_eq!(natural_cmp("node-2", "node-2"), Ordering::Equal);
        assert_eq!(natural_cmp("", "a"), Ordering::Less);
    }
}
