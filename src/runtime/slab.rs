//! A slab: values parked in a `Vec` at a place that stays theirs until taken, with freed places
//! reused. The object table keeps its objects in one (so its two indexes hold small places, not
//! copies) and the simulation parks its queued deliveries in one (so its heap moves 24-byte
//! entries, not deliveries).

#[derive(Debug)]
pub struct Slab<T> {
    entries: Vec<Option<T>>,
    free: Vec<usize>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { entries: Vec::new(), free: Vec::new() }
    }
}

impl<T> Slab<T> {
    /// Parks `value`, in a freed place if there is one; returns its place.
    pub fn insert(&mut self, value: T) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.entries[i] = Some(value);
                i
            }
            None => {
                self.entries.push(Some(value));
                self.entries.len() - 1
            }
        }
    }

    /// Takes the value at `place` out, freeing the place.
    pub fn take(&mut self, place: usize) -> Option<T> {
        let value = self.entries.get_mut(place)?.take()?;
        self.free.push(place);
        Some(value)
    }

    pub fn get(&self, place: usize) -> Option<&T> {
        self.entries.get(place)?.as_ref()
    }

    pub fn get_mut(&mut self, place: usize) -> Option<&mut T> {
        self.entries.get_mut(place)?.as_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_place_is_reused_and_the_others_keep_theirs() {
        let mut slab = Slab::default();
        let (a, b, c) = (slab.insert("a"), slab.insert("b"), slab.insert("c"));
        assert_eq!(slab.take(b), Some("b"));
        assert_eq!(slab.take(b), None, "a place is freed once");
        assert_eq!(slab.insert("d"), b, "the freed place is reused");
        assert_eq!((slab.get(a), slab.get(b), slab.get(c)), (Some(&"a"), Some(&"d"), Some(&"c")));
    }
}
