//! Starts each new token's (and traffic dot's) flight across the stage, on the compositor.
//!
//! The browser half of [`kubeloop::view::flight`]: a mover sits, invisible, at the stage's top
//! left corner; after each render of its layer, every mover not yet started gets its flight —
//! the flight the library computes from the centres of its sender's and receiver's boxes,
//! measured here in one batch of reads — so the page never lays the stage out again to move it.
//! Boxes are found by the `data-anchor` each bears (`kubeloop::view::stage::anchor`), which a
//! mover's `--from` and `--to` name. A started element is marked (a JavaScript property) and
//! keeps its animation for as long as Yew keeps the element (movers are keyed by hop), so a
//! re-render never restarts one.

use kubeloop::view::flight::{flight, style_value, Flight, Mover, Point};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::Element;
use yew::prelude::*;

// Web Animations on an element. web-sys has them only behind its unstable-API flag; `animate`
// has been in every engine since 2020.
#[wasm_bindgen]
extern "C" {
    /// An element, seen through its Web Animations method.
    type Animatable;
    #[wasm_bindgen(method)]
    fn animate(this: &Animatable, keyframes: &js_sys::Array, options: &js_sys::Object) -> JsValue;
}

fn animatable(el: &Element) -> &Animatable {
    el.unchecked_ref()
}

/// The JavaScript property that marks an element whose flight has started. A property, not an
/// attribute (which would restyle it) nor `getAnimations()` (which makes the browser bring the
/// whole page's style up to date first: on a converging 100-node cluster, a fifth of the main
/// thread).
const STARTED: &str = "kubeloopFlight";

fn started(el: &Element) -> bool {
    js_sys::Reflect::has(el, &STARTED.into()).unwrap_or(true)
}

/// After every render of a layer of movers, starts the new ones' flights (`crate::flight`).
#[hook]
pub fn use_flights(layer: &NodeRef) {
    let layer = layer.clone();
    use_effect(move || {
        if let Some(el) = layer.cast::<web_sys::Element>() {
            launch(&el);
        }
    });
}

/// Gives every mover in `layer` not yet started its flight.
pub fn launch(layer: &Element) {
    let children = layer.children();
    let fresh: Vec<Element> = (0..children.length()).filter_map(|i| children.item(i)).filter(|el| !started(el)).collect();
    if fresh.is_empty() {
        return;
    }
    let Some(stage) = layer.closest(".stage").ok().flatten() else { return };
    // The movers' containing block is the stage's padding box.
    let corner = {
        let r = stage.get_bounding_client_rect();
        Point { x: r.left() + f64::from(stage.client_left()), y: r.top() + f64::from(stage.client_top()) }
    };
    let boxes = anchored_boxes(&stage);
    let reduced = reduced_motion();
    // All reads first (one layout), then the animations (which do not touch layout).
    let flights: Vec<(Element, Option<Flight>)> = fresh
        .into_iter()
        .map(|el| {
            let style = el.get_attribute("style").unwrap_or_default();
            let centre = |var: &str| {
                let name = style_value(&style, var)?;
                boxes.iter().find(|(n, _)| n == name).map(|(_, b)| centre(b, corner))
            };
            let f =
                Mover::from_classes(&el.class_name()).zip(centre("--to")).map(|(mover, to)| flight(mover, centre("--from"), to, reduced));
            (el, f)
        })
        .collect();
    for (el, f) in flights {
        if let Some(f) = f {
            animate(&el, &f);
        }
        // Marked even when it cannot fly (its receiver has no box on the stage): it stays
        // unseen, and is not measured again at every render.
        let _ = js_sys::Reflect::set(&el, &STARTED.into(), &JsValue::TRUE);
    }
}

fn reduced_motion() -> bool {
    web_sys::window().and_then(|w| w.match_media("(prefers-reduced-motion: reduce)").ok().flatten()).is_some_and(|m| m.matches())
}

/// Every box on the stage that names itself with `data-anchor`, with that name. A list, not a
/// map: a few dozen boxes at teaching scale, and a map of elements would add its own code to
/// the page's first load.
fn anchored_boxes(stage: &Element) -> Vec<(String, Element)> {
    let mut boxes = Vec::new();
    let Ok(list) = stage.query_selector_all("[data-anchor]") else { return boxes };
    for i in 0..list.length() {
        let Some(el) = list.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else { continue };
        if let Some(name) = el.get_attribute("data-anchor") {
            boxes.push((name, el));
        }
    }
    boxes
}

/// The centre of `el`'s box, from the stage's `corner`.
fn centre(el: &Element, corner: Point) -> Point {
    let r = el.get_bounding_client_rect();
    Point { x: r.left() + r.width() / 2.0 - corner.x, y: r.top() + r.height() / 2.0 - corner.y }
}

fn animate(el: &Element, f: &Flight) {
    let keyframes = js_sys::Array::new();
    for k in &f.keyframes {
        let frame = js_sys::Object::new();
        let fields: [(&str, JsValue); 4] = [
            ("offset", k.offset.into()),
            ("transform", k.transform.as_str().into()),
            ("opacity", k.opacity.into()),
            ("easing", k.easing.into()),
        ];
        for (key, value) in fields {
            let _ = js_sys::Reflect::set(&frame, &key.into(), &value);
        }
        keyframes.push(&frame);
    }
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"duration".into(), &f.duration_ms.into());
    // Kept at its last keyframe (gone) until Yew removes the element.
    let _ = js_sys::Reflect::set(&options, &"fill".into(), &"forwards".into());
    animatable(el).animate(&keyframes, &options);
}
