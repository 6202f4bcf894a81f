//! The frame governor: how much wall time the simulation of a large cluster may take in one
//! animation frame, following the frame rate the page actually gets.
//!
//! It exists because what drawing 3,000 pods costs depends on the machine and on what else
//! runs on it, so no fixed budget fits: too big and the page drops frames, too small and the
//! simulation falls behind for nothing. The governor cuts the budget when a frame came late and
//! gives a little back when frames come on time (additive increase, multiplicative decrease),
//! between a floor that keeps the simulation moving and a ceiling.

/// Frame intervals longer than this many vsyncs count as a missed frame.
const MISSED_FRAME_VSYNCS: f64 = 1.5;
/// How much of the budget a missed frame takes away, and how much an on-time frame gives back.
const BUDGET_CUT: f64 = 0.7;
const BUDGET_GROWTH_MS: f64 = 0.25;

/// The large cluster's per-frame simulation budget, which follows the frame rate: a frame that
/// came later than one vsync after the last (the page missed one) cuts the budget, an on-time
/// frame gives a little back. Drawing 3,000 pods takes most of a frame, and what it takes
/// depends on the machine; the simulation gets what is left, and falls behind (shown as
/// lagging) rather than the page dropping frames.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameGovernor {
    min_ms: f64,
    max_ms: f64,
    budget_ms: f64,
    /// The shortest frame interval seen: the display's vsync.
    vsync_ms: f64,
}

impl FrameGovernor {
    pub fn new(min_ms: f64, max_ms: f64) -> FrameGovernor {
        FrameGovernor { min_ms, max_ms, budget_ms: max_ms, vsync_ms: f64::INFINITY }
    }

    /// The budget for a frame that came `dt` wall ms after the last one (0 for the first).
    pub fn budget(&mut self, dt: f64) -> f64 {
        if dt > 0.0 {
            // A few milliseconds of jitter below the true vsync would make every frame look
            // late; frames never come faster than the display, so the minimum is the vsync.
            self.vsync_ms = self.vsync_ms.min(dt);
            self.budget_ms = if dt > self.vsync_ms * MISSED_FRAME_VSYNCS {
                (self.budget_ms * BUDGET_CUT).max(self.min_ms)
            } else {
                (self.budget_ms + BUDGET_GROWTH_MS).min(self.max_ms)
            };
        }
        self.budget_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VSYNC: f64 = 1000.0 / 60.0;

    #[test]
    fn the_first_frame_gets_the_whole_budget() {
        let mut g = FrameGovernor::new(1.0, 4.0);
        assert_eq!(g.budget(0.0), 4.0);
    }

    #[test]
    fn a_missed_vsync_cuts_the_budget_down_to_the_floor_and_on_time_frames_give_it_back() {
        let mut g = FrameGovernor::new(1.0, 4.0);
        assert_eq!(g.budget(VSYNC), 4.0, "on time at the ceiling stays there");
        let late = [g.budget(2.0 * VSYNC), g.budget(2.0 * VSYNC), g.budget(2.0 * VSYNC)];
        assert!((late[0] - 2.8).abs() < 1e-9 && (late[1] - 1.96).abs() < 1e-9 && (late[2] - 1.372).abs() < 1e-9, "{late:?}");
        for _ in 0..10 {
            g.budget(3.0 * VSYNC);
        }
        assert_eq!(g.budget(2.0 * VSYNC), 1.0, "never below the floor");
        assert_eq!(g.budget(VSYNC), 1.25, "an on-time frame gives a quarter millisecond back");
        for _ in 0..20 {
            g.budget(VSYNC);
        }
        assert_eq!(g.budget(VSYNC), 4.0, "never above the ceiling");
    }

    #[test]
    fn the_vsync_is_the_shortest_interval_so_a_fast_display_is_judged_by_its_own_rate() {
        let mut g = FrameGovernor::new(1.0, 4.0);
        let fast = 1000.0 / 120.0;
        g.budget(fast);
        // Two 120 Hz vsyncs: late on this display, though on time at 60 Hz.
        assert!((g.budget(2.0 * fast) - 2.8).abs() < 1e-9);
        assert!((g.budget(1.2 * fast) - 3.05).abs() < 1e-9, "within half a vsync is on time");
    }
}
