//! How a message crosses the stage: the path and pace of a token's (or a traffic dot's) flight
//! from its sender's box to its receiver's.
//!
//! Why it is computed here and not left to a CSS animation: an animation of `left`/`top` (or
//! any token placed by CSS anchor positioning) makes the browser restyle and lay out the stage on
//! every frame for as long as any token flies — measured on the default scenario, about two
//! thirds of the page's main thread, which a slow phone spends instead on running the simulation
//! (and, on a cold load, on drawing the first picture). Instead a token sits at the stage's
//! corner and flies as a `transform`, which the browser's compositor animates without the main
//! thread. The page measures the sender's and receiver's boxes once, when the token appears;
//! everything else is decided here, as data.

/// A point on the stage, in CSS pixels from its top left corner.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// What is flying: a token with words (or drawn as a dot), a bookkeeping token, or a
/// connection's traffic dot (kube-proxy to a pod).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mover {
    Token,
    QuietToken,
    TrafficDot,
}

impl Mover {
    /// From the element's class list (`token quiet dot`, `traffic-dot refused`).
    pub fn from_classes(classes: &str) -> Option<Mover> {
        let has = |c: &str| classes.split_ascii_whitespace().any(|x| x == c);
        if has("traffic-dot") {
            Some(Mover::TrafficDot)
        } else if has("token") {
            Some(if has("quiet") { Mover::QuietToken } else { Mover::Token })
        } else {
            None
        }
    }

    /// How long the whole flight lasts, landing and a moment at the receiver included: long
    /// enough to be read at teaching speed, short enough that tokens do not pile up.
    pub fn duration_ms(self) -> f64 {
        match self {
            Mover::Token => 1800.0,
            Mover::QuietToken => 1200.0,
            Mover::TrafficDot => 1100.0,
        }
    }

    fn easing(self) -> &'static str {
        match self {
            Mover::TrafficDot => "ease-in",
            _ => "ease-in-out",
        }
    }
}

/// One keyframe: at `offset` (0 to 1) of the flight, the mover is `transform`ed from the stage's
/// corner to where it is and has `opacity`; `easing` shapes the way to the next keyframe.
#[derive(Clone, Debug, PartialEq)]
pub struct Keyframe {
    pub offset: f64,
    pub transform: String,
    pub opacity: f64,
    pub easing: &'static str,
}

/// A mover's whole flight: Web Animations keyframes and their duration.
#[derive(Clone, Debug, PartialEq)]
pub struct Flight {
    pub duration_ms: f64,
    pub keyframes: Vec<Keyframe>,
}

/// The flight of `mover` landing at `to`, sent from `from` (`None` when the sender has no box on
/// the stage: the mover only appears where it lands). With `reduced_motion` it never moves.
///
/// The shape: it grows at its sender (the first 8 %), travels to its receiver (until
/// [`LANDS`]), and is gone a moment after it lands: a label that stayed on its receiver's box
/// covered what the learner reads there. Never half transparent: a faded label would fail
/// contrast, so its opacity steps from 1 to 0 at the very end.
pub fn flight(mover: Mover, from: Option<Point>, to: Point, reduced_motion: bool) -> Flight {
    let duration_ms = mover.duration_ms();
    let at = |p: Point, scale: &str| format!("translate({}px, {}px) scale({scale})", px(p.x), px(p.y));
    let keyframe = |offset: f64, transform: String, opacity: f64, easing: &'static str| Keyframe { offset, transform, opacity, easing };
    let keyframes = match from {
        Some(from) if !reduced_motion => vec![
            keyframe(0.0, at(from, "0.6"), 1.0, "linear"),
            keyframe(0.08, at(from, "1"), 1.0, mover.easing()),
            keyframe(LANDS, at(to, "1"), 1.0, "step-end"),
            keyframe(1.0, at(to, "1"), 0.0, "linear"),
        ],
        _ => vec![
            keyframe(0.0, at(to, "1"), 1.0, "linear"),
            keyframe(0.99, at(to, "1"), 1.0, "step-end"),
            keyframe(1.0, at(to, "1"), 0.0, "linear"),
        ],
    };
    Flight { duration_ms, keyframes }
}

/// Where in its flight a moving token reaches its receiver; it is gone at the end, 5 % later.
pub const LANDS: f64 = 0.95;

/// To the whole pixel: enough for a path, the same text natively and in wasm, and formatted as
/// an integer (a float's formatting code would cost the page's first load about 3 KB).
fn px(v: f64) -> i64 {
    v.round() as i64
}

/// The value of property `name` in an inline `style` attribute (`--from:--c-etcd;--lane:1`): how
/// the page reads, without asking the browser's style engine, which boxes a token joins.
pub fn style_value<'a>(style: &'a str, name: &str) -> Option<&'a str> {
    style.split(';').find_map(|decl| {
        let (prop, value) = decl.split_once(':')?;
        (prop.trim() == name).then(|| value.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const API: Point = Point { x: 700.0, y: 100.0 };
    const NODE: Point = Point { x: 300.0, y: 600.0 };

    #[test]
    fn a_token_starts_at_its_sender_grows_travels_and_is_gone_at_the_end() {
        let f = flight(Mover::Token, Some(NODE), API, false);
        assert_eq!(f.duration_ms, 1800.0);
        let first = &f.keyframes[0];
        assert_eq!((first.offset, first.transform.as_str(), first.opacity), (0.0, "translate(300px, 600px) scale(0.6)", 1.0));
        let grown = &f.keyframes[1];
        assert_eq!((grown.transform.as_str(), grown.easing), ("translate(300px, 600px) scale(1)", "ease-in-out"));
        let landed = f.keyframes.iter().find(|k| k.transform == "translate(700px, 100px) scale(1)").unwrap();
        assert!(landed.offset >= 0.95, "gone a moment after it lands, not staying on the receiver: {landed:?}");
        assert!(f.keyframes.iter().skip_while(|k| k.offset < landed.offset).all(|k| k.transform == landed.transform));
        let last = f.keyframes.last().unwrap();
        assert_eq!((last.offset, last.opacity), (1.0, 0.0));
        // Opaque until the last step: never a half-transparent label.
        assert!(f.keyframes[..f.keyframes.len() - 1].iter().all(|k| k.opacity == 1.0));
        assert_eq!(f.keyframes[f.keyframes.len() - 2].easing, "step-end");
    }

    #[test]
    fn keyframes_rise_from_zero_to_one_and_every_keyframe_names_the_same_functions() {
        for mover in [Mover::Token, Mover::QuietToken, Mover::TrafficDot] {
            for (from, reduced) in [(Some(NODE), false), (None, false), (Some(NODE), true)] {
                let f = flight(mover, from, API, reduced);
                assert_eq!(f.keyframes.first().unwrap().offset, 0.0);
                assert_eq!(f.keyframes.last().unwrap().offset, 1.0);
                assert!(f.keyframes.windows(2).all(|w| w[0].offset < w[1].offset));
                // The browser interpolates transforms function by function: the lists must match.
                let shape = |t: &str| {
                    t.split(')')
                        .filter_map(|s| s.split('(').next())
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect::<Vec<_>>()
                };
                let first = shape(&f.keyframes[0].transform);
                assert!(f.keyframes.iter().all(|k| shape(&k.transform) == first), "{mover:?}: {:?}", f.keyframes);
            }
        }
    }

    #[test]
    fn with_reduced_motion_or_no_sender_it_only_appears_where_it_lands() {
        for f in [flight(Mover::Token, Some(NODE), API, true), flight(Mover::Token, None, API, false)] {
            assert!(f.keyframes.iter().all(|k| k.transform == "translate(700px, 100px) scale(1)"), "{f:?}");
            assert_eq!(f.keyframes.last().unwrap().opacity, 0.0);
        }
    }

    #[test]
    fn movers_are_told_apart_by_their_classes_and_keep_their_pace() {
        assert_eq!(Mover::from_classes("token request"), Some(Mover::Token));
        assert_eq!(Mover::from_classes("token watch quiet dot"), Some(Mover::QuietToken));
        assert_eq!(Mover::from_classes("traffic-dot refused"), Some(Mover::TrafficDot));
        assert_eq!(Mover::from_classes("tokens"), None);
        assert_eq!(flight(Mover::QuietToken, Some(NODE), API, false).duration_ms, 1200.0);
        let dot = flight(Mover::TrafficDot, Some(NODE), API, false);
        assert_eq!((dot.duration_ms, dot.keyframes[1].easing), (1100.0, "ease-in"));
    }

    #[test]
    fn offsets_are_rounded_to_the_pixel() {
        let f = flight(Mover::Token, Some(Point { x: 10.4, y: 0.6 }), Point { x: -3.2, y: -0.7 }, false);
        assert_eq!(f.keyframes[0].transform, "translate(10px, 1px) scale(0.6)");
        assert_eq!(f.keyframes[2].transform, "translate(-3px, -1px) scale(1)");
    }

    #[test]
    fn style_values_are_read_from_an_inline_style() {
        let token = "--from:--c-kubelet-node-1;--to:--c-kube-apiserver;--lane:3";
        assert_eq!(style_value(token, "--from"), Some("--c-kubelet-node-1"));
        assert_eq!(style_value(token, "--to"), Some("--c-kube-apiserver"));
        assert_eq!(style_value(token, "--lane"), Some("3"));
        assert_eq!(style_value("--to: --c-etcd ;", "--to"), Some("--c-etcd"));
        assert_eq!(style_value("--from:--c-etcd", "--to"), None);
        assert_eq!(style_value("", "--to"), None);
    }
}
