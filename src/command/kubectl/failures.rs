//! What `kubectl apply -f` and `kubectl create -f` print when some documents of a file fail.
//!
//! Both read their files with the resource builder's `ContinueOnError`: a document kubectl
//! cannot decode or map to a served kind is an error of its own and the others go on. The errors
//! are printed at the end, after the documents that worked, by kubectl's `checkErr`: one error
//! alone in its standard form (`error: …`, `Error from server (…): …`, or `The Deployment "x"
//! is invalid: …` with a line per cause); several, one per line in their raw form, without the
//! `error: ` prefix (`MultipleErrors`). Apply collects the builder's errors first (one error, or
//! an aggregate that prints as `[a, b]` when it shares the list with others), then the errors of
//! the documents it sent; create collects them all in document order.

use crate::api::{ApiError, Reason};
use crate::command::CommandOutput;
use std::fmt;

/// One document that failed.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// kubectl's own error (decoding, resource mapping, namespace): the message, without the
    /// `error: ` prefix it gets when printed alone.
    Client(String),
    /// The API server refused what was sent from `source` (`creating`, `applying patch to`).
    Server { error: ApiError, verb: &'static str, source: String },
}

impl Failure {
    /// A plain message, with or without kubectl's `error: ` in front.
    pub fn client(message: &str) -> Failure {
        Failure::Client(message.strip_prefix("error: ").unwrap_or(message).to_string())
    }

    /// The error as `checkErr` prints it when it is the only one.
    pub fn alone(&self) -> String {
        match self {
            Failure::Client(m) => format!("error: {m}"),
            Failure::Server { error, .. } if error.reason == Reason::Invalid => error.kubectl_message(),
            Failure::Server { .. } => self.listed(),
        }
    }

    /// The error as `MultipleErrors` prints it among others: a plain error's own text; the
    /// server's with its reason and the source it came from, in the Status message's own words
    /// (an invalid object's kind qualified by its group: `Deployment.apps "x" is invalid`).
    pub fn listed(&self) -> String {
        match self {
            Failure::Client(m) => m.clone(),
            Failure::Server { error, verb, source } => {
                let message = &error.message;
                let reason = match error.reason.as_str() {
                    "" => String::new(),
                    r => format!(" ({r})"),
                };
                format!("Error from server{reason}: error when {verb} {source:?}: {message}")
            }
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.alone())
    }
}

/// One entry of the error list `checkErr` is given: an error, or an aggregate of several.
enum Entry<'a> {
    One(&'a Failure),
    Several(&'a [Failure]),
}

impl Entry<'_> {
    /// An aggregate's own text: its distinct errors, `[a, b]` (one alone is just itself).
    fn listed(&self) -> String {
        match self {
            Entry::One(f) => f.listed(),
            Entry::Several(all) => {
                let mut seen: Vec<String> = Vec::new();
                for f in all.iter() {
                    let m = f.listed();
                    if !seen.contains(&m) {
                        seen.push(m);
                    }
                }
                match seen.len() {
                    1 => seen.remove(0),
                    _ => format!("[{}]", seen.join(", ")),
                }
            }
        }
    }
}

/// Prints apply's errors: the builder's (decoding, mapping) as one entry, then each document's.
pub fn report_apply(out: &mut CommandOutput, builder: &[Failure], sent: &[Failure]) {
    let mut entries: Vec<Entry> = Vec::new();
    match builder {
        [] => {}
        [one] => entries.push(Entry::One(one)),
        several => entries.push(Entry::Several(several)),
    }
    entries.extend(sent.iter().map(Entry::One));
    match entries.as_slice() {
        [] => {}
        // An aggregate alone is unwrapped into its errors, each on its own line.
        [Entry::Several(all)] => all.iter().for_each(|f| out.fail(&f.listed())),
        [Entry::One(f)] => out.fail(&f.alone()),
        several => several.iter().for_each(|e| out.fail(&e.listed())),
    }
}

/// Prints create's errors, all in one list in document order.
pub fn report_create(out: &mut CommandOutput, failures: &[Failure]) {
    match failures {
        [] => {}
        [one] => out.fail(&one.alone()),
        several => several.iter().for_each(|f| out.fail(&f.listed())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::FieldError;
    use crate::model::Kind;

    fn mapping(name: &str) -> Failure {
        Failure::client(&format!("error: resource mapping not found for name: {name:?} namespace: \"\" from \"app.yaml\": no matches for kind \"Service\" in version \"v1\"\nensure CRDs are installed first"))
    }

    fn invalid() -> Failure {
        let causes =
            vec![FieldError::invalid("spec.replicas", -1, "must be greater than or equal to 0"), FieldError::required("spec.selector")];
        Failure::Server { error: ApiError::invalid(Kind::Deployment, "bad", causes), verb: "creating", source: "app.yaml".into() }
    }

    fn text(f: impl FnOnce(&mut CommandOutput)) -> String {
        let mut out = CommandOutput::empty();
        f(&mut out);
        assert!(!out.ok);
        out.stderr
    }

    #[test]
    fn one_error_alone_is_printed_in_its_standard_form() {
        assert!(text(|o| report_apply(o, &[mapping("svc")], &[])).starts_with("error: resource mapping not found for name: \"svc\""));
        assert_eq!(
            text(|o| report_apply(o, &[], &[invalid()])),
            "The Deployment \"bad\" is invalid: \n* spec.replicas: Invalid value: -1: must be greater than or equal to 0\n* spec.selector: Required value\n"
        );
    }

    #[test]
    fn several_errors_are_one_a_line_in_their_raw_form_the_builders_as_one_aggregate() {
        let both = text(|o| report_apply(o, &[mapping("a"), mapping("b")], &[]));
        assert_eq!(both.lines().filter(|l| l.starts_with("resource mapping not found")).count(), 2, "{both}");
        let mixed = text(|o| report_apply(o, &[mapping("a"), mapping("b")], &[invalid()]));
        let lines: Vec<&str> = mixed.lines().collect();
        assert!(lines[0].starts_with("[resource mapping not found for name: \"a\""), "{mixed}");
        assert!(lines[1].starts_with("ensure CRDs are installed first, resource mapping not found for name: \"b\""), "{mixed}");
        assert_eq!(
            lines[3],
            "Error from server (Invalid): error when creating \"app.yaml\": Deployment.apps \"bad\" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.selector: Required value]"
        );
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn create_lists_every_error_in_document_order() {
        let out = text(|o| report_create(o, &[invalid(), mapping("a")]));
        assert!(out.starts_with("Error from server (Invalid): error when creating \"app.yaml\": Deployment.apps"), "{out}");
        assert!(out.contains("\nresource mapping not found for name: \"a\""), "{out}");
    }
}
