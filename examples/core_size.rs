//! The simulation core and the command language as a wasm module of their own, without the page.
//!
//! It exists to answer one question with a number: how much of the page's download is the
//! simulation itself, as opposed to Yew and the page's views? `scripts/core-size.sh` builds it with
//! the page's release profile and wasm-opt flags and prints its brotli size. Its one export reads a
//! scenario and command lines, so everything the page's console can reach stays linked in.

use kubeloop::command::scenario::Scenario;
use kubeloop::command::Session;

/// Where the host writes its input: `len` bytes this module owns until `run` takes them back.
#[no_mangle]
pub extern "C" fn alloc(len: usize) -> *mut u8 {
    let mut buffer = std::mem::ManuallyDrop::new(Vec::<u8>::with_capacity(len));
    buffer.as_mut_ptr()
}

/// Runs a scenario (the text before a `---lines---` line) and then each command line after it,
/// and returns how many bytes of output they printed.
///
/// # Safety
/// `ptr` must come from [`alloc`] with the same `len`, filled with `len` bytes by the host.
#[no_mangle]
pub unsafe extern "C" fn run(ptr: *mut u8, len: usize) -> usize {
    // SAFETY: the caller passes back a buffer `alloc` made with exactly this capacity.
    let bytes = unsafe { Vec::from_raw_parts(ptr, len, len) };
    let Ok(text) = String::from_utf8(bytes) else { return 0 };
    let (scenario, lines) = text.split_once("\n---lines---\n").unwrap_or((&text, ""));
    let Ok(scenario) = Scenario::parse(scenario) else { return 0 };
    let Ok(mut session) = Session::new(scenario, None) else { return 0 };
    lines.lines().map(|line| session.execute(line)).map(|output| output.stdout.len() + output.stderr.len()).sum()
}
