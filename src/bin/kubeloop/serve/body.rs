//! The body of an answer: whole (every ordinary answer) or a stream of frames (a watch).
//!
//! hyper wants one body type per service; a watch's frames come from the simulation's thread
//! through a channel, and a dropped receiver (the client hung up) is how the watch learns to end.

use hyper::body::{Buf, Bytes, Frame, SizeHint};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc::Receiver;

pub(crate) enum Body {
    Full(Option<Bytes>),
    Stream(Receiver<Bytes>),
}

impl Body {
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
        Body::Full(Some(bytes.into()))
    }
}

/// How much of a watch's backlog one frame carries.
const FRAME_MOST: usize = 256 * 1024;

/// The first waiting event and as many more as are already waiting, up to `FRAME_MOST`, as one
/// frame: receiving counts against the task's turn, so a frame per event would let a busy
/// simulation starve a watch of its turns (a hundred events a turn); a frame per turn keeps up.
/// The events are not copied: hyper writes them with one vectored write.
fn gather(rx: &mut Receiver<Bytes>, first: Bytes) -> Lines {
    let mut frame = Lines::default();
    frame.push(first);
    while frame.len < FRAME_MOST {
        let Ok(next) = rx.try_recv() else { break };
        frame.push(next);
    }
    frame
}

/// A frame's data: one or more byte strings, written one after the other.
#[derive(Default)]
pub(crate) struct Lines {
    parts: VecDeque<Bytes>,
    /// The bytes left in all of them.
    len: usize,
}

impl Lines {
    fn push(&mut self, bytes: Bytes) {
        if !bytes.is_empty() {
            self.len += bytes.len();
            self.parts.push_back(bytes);
        }
    }

    fn of(bytes: Bytes) -> Lines {
        let mut lines = Lines::default();
        lines.push(bytes);
        lines
    }
}

impl Buf for Lines {
    fn remaining(&self) -> usize {
        self.len
    }

    fn chunk(&self) -> &[u8] {
        self.parts.front().map_or(&[], |b| b.as_ref())
    }

    fn advance(&mut self, mut count: usize) {
        while count > 0 {
            let Some(front) = self.parts.front_mut() else { return };
            let step = count.min(front.len());
            front.advance(step);
            self.len -= step;
            count -= step;
            if front.is_empty() {
                self.parts.pop_front();
            }
        }
    }

    fn chunks_vectored<'a>(&'a self, dst: &mut [IoSlice<'a>]) -> usize {
        let mut n = 0;
        for (slot, part) in dst.iter_mut().zip(&self.parts) {
            *slot = IoSlice::new(part);
            n += 1;
        }
        n
    }
}

impl hyper::body::Body for Body {
    type Data = Lines;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Lines>, Infallible>>> {
        match self.get_mut() {
            Body::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(Lines::of(b))))),
            Body::Stream(rx) => rx.poll_recv(cx).map(|frame| frame.map(|first| Ok(Frame::data(gather(rx, first))))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Body::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Body::Full(None) => SizeHint::with_exact(0),
            Body::Stream(_) => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_of_lines_reads_and_advances_as_one_buffer() {
        let mut lines = Lines::default();
        for part in ["ab", "", "cde", "f"] {
            lines.push(Bytes::from(part));
        }
        assert_eq!(lines.remaining(), 6);
        let mut slices = [IoSlice::new(&[]); 4];
        assert_eq!(lines.chunks_vectored(&mut slices), 3, "the empty one is not kept");
        lines.advance(3);
        assert_eq!((lines.chunk(), lines.remaining()), (&b"de"[..], 3));
        assert_eq!(lines.copy_to_bytes(3), Bytes::from("def"));
        assert!(!lines.has_remaining());
    }
}
