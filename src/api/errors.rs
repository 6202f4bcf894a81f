//! `metav1.Status` errors as the API server returns them and kubectl prints them.

use crate::model::Kind;
use std::fmt;

/// Where kubectl and the kubelets reach kube-apiserver (kubeadm's `--secure-port` 6443 on the
/// control-plane node, as its admin kubeconfig names it there).
pub const API_SERVER_ADDRESS: &str = "127.0.0.1:6443";

/// One field error: `spec.replicas: Invalid value: -1: must be greater than or equal to 0`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub detail: String,
}

impl FieldError {
    pub fn invalid(field: &str, value: impl fmt::Display, why: &str) -> Self {
        FieldError { field: field.into(), detail: format!("Invalid value: {value}: {why}") }
    }
    pub fn required(field: &str) -> Self {
        FieldError { field: field.into(), detail: "Required value".into() }
    }
    pub fn required_why(field: &str, why: &str) -> Self {
        FieldError { field: field.into(), detail: format!("Required value: {why}") }
    }
    pub fn unsupported(field: &str, value: &str, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        FieldError { field: field.into(), detail: format!("Unsupported value: {value:?}: supported values: {}", list.join(", ")) }
    }
    pub fn forbidden(field: &str, why: &str) -> Self {
        FieldError { field: field.into(), detail: format!("Forbidden: {why}") }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.detail)
    }
}

/// The `reason` of a failed request, with its HTTP code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    NotFound,
    Forbidden,
    AlreadyExists,
    Conflict,
    Invalid,
    BadRequest,
    /// 405: a verb the resource does not allow now (creating objects of a terminating
    /// CustomResourceDefinition).
    MethodNotAllowed,
    Gone,
    ServiceUnavailable,
    /// 429: the eviction API refusing what would break a PodDisruptionBudget.
    TooManyRequests,
    InternalError,
    Timeout,
    /// `metav1.StatusReasonUnknown` (empty): an error the server had no reason for, such as
    /// etcd's own `etcdserver: request timed out`, returned as a 500.
    Unknown,
    /// No HTTP answer at all: nothing listens on the API server's port (it is stopped).
    ConnectionRefused,
    /// No HTTP answer at all: the network between client and server drops everything.
    NetworkTimeout,
}

impl Reason {
    pub fn code(self) -> u16 {
        match self {
            Reason::NotFound => 404,
            Reason::Forbidden => 403,
            Reason::AlreadyExists | Reason::Conflict => 409,
            Reason::Invalid => 422,
            Reason::BadRequest => 400,
            Reason::MethodNotAllowed => 405,
            Reason::Gone => 410,
            Reason::ServiceUnavailable => 503,
            Reason::TooManyRequests => 429,
            Reason::InternalError => 500,
            Reason::Timeout => 504,
            Reason::Unknown => 500,
            // Transport errors never reached an HTTP status.
            Reason::ConnectionRefused | Reason::NetworkTimeout => 0,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::NotFound => "NotFound",
            Reason::Forbidden => "Forbidden",
            Reason::AlreadyExists => "AlreadyExists",
            Reason::Conflict => "Conflict",
            Reason::Invalid => "Invalid",
            Reason::BadRequest => "BadRequest",
            Reason::MethodNotAllowed => "MethodNotAllowed",
            Reason::Gone => "Gone",
            Reason::ServiceUnavailable => "ServiceUnavailable",
            Reason::TooManyRequests => "TooManyRequests",
            Reason::InternalError => "InternalError",
            Reason::Timeout => "Timeout",
            Reason::Unknown => "",
            Reason::ConnectionRefused => "ConnectionRefused",
            Reason::NetworkTimeout => "NetworkTimeout",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub reason: Reason,
    pub message: String,
    /// For `Invalid`: the field errors, which kubectl lists one per line.
    pub causes: Vec<FieldError>,
}

impl ApiError {
    pub fn new(reason: Reason, message: impl Into<String>) -> Self {
        ApiError { reason, message: message.into(), causes: Vec::new() }
    }
    pub fn not_found(kind: Kind, name: &str) -> Self {
        Self::not_found_named(&kind.qualified_plural(), name)
    }
    /// NotFound for a resource named by its plural and group (`crontabs.stable.example.com`),
    /// as custom resources are.
    pub fn not_found_named(resource: &str, name: &str) -> Self {
        Self::new(Reason::NotFound, format!("{resource} {name:?} not found"))
    }
    pub fn already_exists(kind: Kind, name: &str) -> Self {
        Self::already_exists_named(&kind.qualified_plural(), name)
    }
    pub fn already_exists_named(resource: &str, name: &str) -> Self {
        Self::new(Reason::AlreadyExists, format!("{resource} {name:?} already exists"))
    }
    pub fn conflict(kind: Kind, name: &str) -> Self {
        Self::conflict_named(&kind.qualified_plural(), name)
    }
    pub fn conflict_named(resource: &str, name: &str) -> Self {
        Self::new(
            Reason::Conflict,
            format!(
                "Operation cannot be fulfilled on {resource} {name:?}: the object has been modified; please apply your changes to the latest version and try again"
            ),
        )
    }
    pub fn invalid(kind: Kind, name: &str, causes: Vec<FieldError>) -> Self {
        Self::invalid_named(&kind.qualified_kind(), name, causes)
    }
    /// Invalid for a kind named with its group (`CronTab.stable.example.com`).
    pub fn invalid_named(kind: &str, name: &str, causes: Vec<FieldError>) -> Self {
        let list: Vec<String> = causes.iter().map(ToString::to_string).collect();
        let joined = if list.len() == 1 { list[0].clone() } else { format!("[{}]", list.join(", ")) };
        ApiError { reason: Reason::Invalid, message: format!("{kind} {name:?} is invalid: {joined}"), causes }
    }
    /// `NewForbidden`: `KIND "NAME" is forbidden: WHY`.
    pub fn forbidden(kind: Kind, name: &str, why: &str) -> Self {
        Self::new(Reason::Forbidden, format!("{} {name:?} is forbidden: {why}", kind.qualified_plural()))
    }
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(Reason::Gone, message)
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(Reason::ServiceUnavailable, message)
    }
    /// The API server is stopped: the client's connection is refused before any HTTP exchange.
    pub fn connection_refused() -> Self {
        Self::new(
            Reason::ConnectionRefused,
            format!("The connection to the server {API_SERVER_ADDRESS} was refused - did you specify the right host or port?"),
        )
    }
    /// The client's node is cut off from the API server: its dial times out.
    pub fn network_timeout() -> Self {
        Self::new(Reason::NetworkTimeout, format!("Unable to connect to the server: dial tcp {API_SERVER_ADDRESS}: i/o timeout"))
    }
    /// etcd does not answer: the API server passes etcd's error on as a 500 with no reason.
    pub fn etcd_timeout() -> Self {
        Self::new(Reason::Unknown, "etcdserver: request timed out")
    }
    /// What Go's dialer said for a request that never reached a server, as a wrapped error
    /// prints it inside its `url.Error` (`dial tcp 127.0.0.1:6443: connect: connection
    /// refused`); None for an answer from the server.
    pub fn dial_error(&self) -> Option<String> {
        match self.reason {
            Reason::ConnectionRefused => Some(format!("dial tcp {API_SERVER_ADDRESS}: connect: connection refused")),
            Reason::NetworkTimeout => Some(format!("dial tcp {API_SERVER_ADDRESS}: i/o timeout")),
            _ => None,
        }
    }
    /// Whether the request never reached a server (connection refused, network down).
    pub fn is_transport(&self) -> bool {
        matches!(self.reason, Reason::ConnectionRefused | Reason::NetworkTimeout)
    }
    pub fn code(&self) -> u16 {
        self.reason.code()
    }

    /// What kubectl prints for this error (`kubectl` CheckErr / StandardErrorMessage).
    pub fn kubectl_message(&self) -> String {
        if self.reason == Reason::Invalid {
            // kubectl names the object by the Status details' kind, without the group the
            // message carries (`The Deployment "web" is invalid`).
            let (head, rest) = self.message.split_once(" is invalid:").unwrap_or((&self.message, ""));
            let head = match head.split_once(' ') {
                Some((kind, name)) => format!("{} {name}", kind.split('.').next().unwrap_or(kind)),
                None => head.to_string(),
            };
            if self.causes.len() > 1 {
                let lines: Vec<String> = self.causes.iter().map(|c| format!("* {c}")).collect();
                return format!("The {head} is invalid: \n{}", lines.join("\n"));
            }
            return format!("The {head} is invalid:{rest}");
        }
        match self.reason {
            // kubectl's StandardErrorMessage: transport errors are printed as they are; a
            // Status without a reason as "Error from server: MESSAGE".
            Reason::ConnectionRefused | Reason::NetworkTimeout => self.message.clone(),
            Reason::Unknown => format!("Error from server: {}", self.message),
            _ => format!("Error from server ({}): {}", self.reason.as_str(), self.message),
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_print_as_kubectl_prints_them() {
        assert_eq!(ApiError::not_found(Kind::Pod, "x").kubectl_message(), r#"Error from server (NotFound): pods "x" not found"#);
        assert_eq!(
            ApiError::already_exists(Kind::Deployment, "web").kubectl_message(),
            r#"Error from server (AlreadyExists): deployments.apps "web" already exists"#
        );
        let invalid = ApiError::invalid(
            Kind::Deployment,
            "web",
            vec![FieldError::invalid("spec.replicas", -1, "must be greater than or equal to 0")],
        );
        assert_eq!(
            invalid.kubectl_message(),
            r#"The Deployment "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"#
        );
        // The Status message names the kind with its group; kubectl's own form does not.
        assert_eq!(
            invalid.message,
            r#"Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"#
        );
        let pod = ApiError::invalid(Kind::Pod, "a.b", vec![FieldError::required("spec.containers"), FieldError::required("spec.x")]);
        assert_eq!(pod.message, r#"Pod "a.b" is invalid: [spec.containers: Required value, spec.x: Required value]"#);
        assert_eq!(pod.kubectl_message(), "The Pod \"a.b\" is invalid: \n* spec.containers: Required value\n* spec.x: Required value");
        assert_eq!(
            ApiError::conflict(Kind::Pod, "x").message,
            r#"Operation cannot be fulfilled on pods "x": the object has been modified; please apply your changes to the latest version and try again"#
        );
    }

    #[test]
    fn unavailability_prints_as_kubectl_prints_it() {
        assert_eq!(
            ApiError::connection_refused().kubectl_message(),
            "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?"
        );
        assert_eq!(ApiError::etcd_timeout().kubectl_message(), "Error from server: etcdserver: request timed out");
        assert_eq!(ApiError::etcd_timeout().code(), 500);
        assert_eq!(ApiError::network_timeout().kubectl_message(), "Unable to connect to the server: dial tcp 127.0.0.1:6443: i/o timeout");
        assert!(ApiError::connection_refused().is_transport() && !ApiError::etcd_timeout().is_transport());
    }
}
