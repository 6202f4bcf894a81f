//! The body of an answer: whole (every ordinary answer) or a stream of frames (a watch).
//!
//! hyper wants one body type per service; a watch's frames come from the simulation's thread
//! through a channel, and a dropped receiver (the client hung up) is how the watch learns to end.

use hyper::body::{Bytes, Frame, SizeHint};
use std::convert::Infallible;
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
fn gather(rx: &mut Receiver<Bytes>, first: Bytes) -> Bytes {
    let Ok(second) = rx.try_recv() else { return first };
    let mut frame = Vec::with_capacity(FRAME_MOST.min(first.len() * 64));
    frame.extend_from_slice(&first);
    frame.extend_from_slice(&second);
    while frame.len() < FRAME_MOST {
        let Ok(next) = rx.try_recv() else { break };
        frame.extend_from_slice(&next);
    }
    Bytes::from(frame)
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
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
