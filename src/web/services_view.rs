//! Services on the stage: a box per Service with the endpoints its EndpointSlices list, and the
//! connections `sim traffic` sends, as dots from the sending node's kube-proxy to the pod its
//! table picked. What to draw is decided in `kubeloop::view::services`; this only renders it.
//!
//! The dots move as the message tokens do: one CSS animation per element, anchored at both ends
//! (every pod chip names itself `--p-POD`, every Service box `--s-NAMESPACE-NAME`), so the page
//! never re-renders to move them.

use std::rc::Rc;

use yew::prelude::*;

use kubeloop::view::services::{Dot, ServiceView};
use kubeloop::view::stage::anchor;

/// The anchor of a pod's chip (`kubeloop::view::stage::anchor`).
pub fn pod_anchor(name: &str) -> String {
    anchor(&format!("p-{name}"))
}

/// The anchor of a Service's box.
fn service_anchor(key: &str) -> String {
    anchor(&format!("s-{key}"))
}

#[derive(Properties, PartialEq)]
pub struct ServicesProps {
    pub services: Rc<(Vec<ServiceView>, usize)>,
}

/// The Services band: nothing at all in a cluster without one.
#[component]
pub fn ServicesBand(props: &ServicesProps) -> Html {
    let (services, more) = &*props.services;
    if services.is_empty() {
        return html! {};
    }
    html! {
        <ul class="services" aria-label="Services">
            { for services.iter().map(service_box) }
            if *more > 0 {
                <li class="muted">{ format!("…and {more} more Services") }</li>
            }
        </ul>
    }
}

/// One Service: its name, address and selector, its endpoints, its traffic.
fn service_box(s: &ServiceView) -> Html {
    let key = s.key();
    let ready = s.ready();
    html! {
        <li key={key.clone()} class="service" data-anchor={service_anchor(&key)}
            data-testid="service" data-name={s.name.clone()} data-namespace={s.namespace.clone()} data-ready={ready.to_string()}
            title={format!("Service {}: the EndpointSlice controller keeps its endpoints pointed at the ready pods that match {}; each node's kube-proxy turns them into routing rules", s.name, s.selector)}>
            <div class="service-head">
                <span class="service-name">{ format!("svc/{}", s.name) }</span>
                <span class="service-kind">{ s.kind.clone() }</span>
                <span class="service-address">{ s.address.clone() }</span>
            </div>
            <div class="endpoints" role="list" aria-label={format!("Endpoints of {}: {ready} ready of {}", s.name, s.endpoints.len())}>
                <span class="endpoints-label">{ format!("endpoints ({}):", s.selector) }</span>
                if s.endpoints.is_empty() {
                    <span class="muted">{ "none — traffic is refused" }</span>
                }
                { for s.endpoints.iter().map(|e| {
                    let tone = e.state.replace(' ', "-");
                    html! {
                        <span role="listitem" class={classes!("endpoint", tone)} data-testid="endpoint" data-pod={e.pod.clone()} data-state={e.state}
                            title={format!("{} at {}: {}", e.pod, e.address, e.state)}>
                            { e.short().to_string() }
                            if e.state != "ready" {
                                <span class="endpoint-state">{ format!(" {}", e.state) }</span>
                            }
                        </span>
                    }
                }) }
                if s.more > 0 {
                    <span class="muted">{ format!("+ {} more", s.more) }</span>
                }
            </div>
            if let Some(t) = &s.traffic {
                <p class="service-traffic" data-testid="service-traffic">
                    { format!("traffic {}: {} answered", t.source, t.answered) }
                    if t.failed > 0 {
                        <span class="failed">{ format!(" · {} failed", t.failed) }</span>
                    }
                </p>
            }
        </li>
    }
}

#[derive(Properties, PartialEq)]
pub struct DotsProps {
    pub dots: Rc<Vec<Dot>>,
    /// The pods on the stage (`NAME`s): a dot to a pod no longer drawn ends at its Service.
    pub pods: Rc<Vec<String>>,
}

/// The connections in flight, each from its node's kube-proxy to its pod (or Service).
#[component]
pub fn TrafficDots(props: &DotsProps) -> Html {
    let layer = use_node_ref();
    crate::flight::use_flights(&layer);
    html! {
        // Hidden from assistive technology: each Service box counts the same in words.
        <div class="traffic" aria-hidden="true" ref={layer}>
            { for props.dots.iter().map(|d| {
                let from = anchor(&format!("kube-proxy-{}", d.from_node));
                let to = match &d.to_pod {
                    Some(pod) if props.pods.iter().any(|p| p == pod) => pod_anchor(pod),
                    _ => service_anchor(&d.service),
                };
                html! {
                    <span key={d.seq.to_string()} class={format!("traffic-dot {}", d.outcome)} style={format!("--from:{from};--to:{to}")}
                        data-testid="traffic-dot" data-seq={d.seq.to_string()} data-from={d.from_node.clone()} data-to={d.to_pod.clone().unwrap_or_default()}
                        data-outcome={d.outcome} title={d.title.clone()}></span>
                }
            }) }
        </div>
    }
}
