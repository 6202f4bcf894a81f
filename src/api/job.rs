//! What kube-apiserver does with a Job before it stores it: the batch/v1 defaults, the job
//! strategy's generated selector and labels, `ValidateJob`'s checks and the fields an update
//! may not change. The Job controller relies on all of it: the selector it reads is the one
//! generated here, and the labels it finds on its pods come from this template.

use super::errors::FieldError;
use super::validation::{go_map_literal, validate_pod_spec};
use crate::model::*;

/// The generated selector's key (and a template label): the Job's UID.
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// A template label: the Job's name.
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
/// The same two, under the names they had before Kubernetes 1.27; still written.
pub const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";
pub const LEGACY_JOB_NAME_LABEL: &str = "job-name";
/// `SetDefaults_Job`'s backoffLimit.
pub const DEFAULT_BACKOFF_LIMIT: i32 = 6;

/// `SetDefaults_Job`: a Job that sets neither completions nor parallelism runs one pod once;
/// one that sets only completions runs them one at a time.
pub fn default_job(job: &mut Job) {
    let spec = &mut job.spec;
    if spec.completions.is_none() && spec.parallelism.is_none() {
        spec.completions = Some(1);
        spec.parallelism = Some(1);
    }
    spec.parallelism.get_or_insert(1);
    spec.backoff_limit.get_or_insert(DEFAULT_BACKOFF_LIMIT);
    spec.completion_mode.get_or_insert_with(|| "NonIndexed".into());
    spec.suspend.get_or_insert(false);
    super::defaults::default_template(&mut spec.template);
    adopt_template_labels(job);
}

/// `SetDefaults_Job` again: a Job without labels of its own takes its template's.
fn adopt_template_labels(job: &mut Job) {
    if job.metadata.labels.is_empty() && !job.spec.template.metadata.labels.is_empty() {
        job.metadata.labels = job.spec.template.metadata.labels.clone();
    }
}

/// The job strategy's `PrepareForCreate`: unless the user chose `manualSelector: true`, the
/// template gets the Job's name and UID as labels and the selector matches the UID, so no two
/// Jobs can claim each other's pods. `uid` is the UID the Job is about to be stored with.
pub fn prepare_for_create(job: &mut Job) {
    job.status = JobStatus::default();
    if job.spec.manual_selector != Some(true) {
        generate_selector(job);
    }
    adopt_template_labels(job);
}

fn generate_selector(job: &mut Job) {
    let (name, uid) = (job.metadata.name.to_string(), job.metadata.uid.to_string());
    let labels = &mut job.spec.template.metadata.labels;
    // A label the user set is kept: validation then says whether it conflicts.
    for (key, value) in
        [(LEGACY_JOB_NAME_LABEL, &name), (JOB_NAME_LABEL, &name), (LEGACY_CONTROLLER_UID_LABEL, &uid), (CONTROLLER_UID_LABEL, &uid)]
    {
        if !labels.contains_key(key) {
            labels.insert(key.to_string(), value.clone());
        }
    }
    let selector = job.spec.selector.get_or_insert_with(Default::default);
    selector.match_labels.entry(CONTROLLER_UID_LABEL.to_string()).or_insert(uid);
}

/// `ValidateJob` (the spec part, and `ValidateGeneratedSelector`).
pub fn validate_job(job: &Job, errs: &mut Vec<FieldError>) {
    validate_job_counts(&job.spec, "spec", errs);
    validate_selector(job, errs);
    validate_job_template(&job.spec, "spec", errs);
}

/// `ValidateJobTemplateSpec` (a CronJob's `jobTemplate`): the Job spec's own checks, and no
/// selector, which the API server generates for each Job made from it.
pub fn validate_job_template_spec(template: &JobTemplateSpec, errs: &mut Vec<FieldError>) {
    let path = "spec.jobTemplate.spec";
    validate_job_counts(&template.spec, path, errs);
    validate_job_template(&template.spec, path, errs);
    if let Some(selector) = &template.spec.selector {
        let sel = crate::command::printers::selector_string(selector);
        errs.push(FieldError::invalid(&format!("{path}.selector"), format!("{{{sel}}}"), "`selector` will be auto-generated"));
    }
    if template.spec.manual_selector == Some(true) {
        errs.push(FieldError::unsupported(&format!("{path}.manualSelector"), "true", &["nil", "false"]));
    }
}

/// `validateJobSpec`'s numbers and completion mode, under `path`.
fn validate_job_counts(spec: &JobSpec, path: &str, errs: &mut Vec<FieldError>) {
    let at = |field: &str| format!("{path}.{field}");
    for (field, value) in [("parallelism", spec.parallelism), ("completions", spec.completions), ("backoffLimit", spec.backoff_limit)] {
        if let Some(v) = value.filter(|v| *v < 0) {
            errs.push(FieldError::invalid(&at(field), v, "must be greater than or equal to 0"));
        }
    }
    if let Some(v) = spec.ttl_seconds_after_finished.filter(|v| *v < 0) {
        errs.push(FieldError::invalid(&at("ttlSecondsAfterFinished"), v, "must be greater than or equal to 0"));
    }
    if let Some(v) = spec.active_deadline_seconds.filter(|v| *v < 0) {
        errs.push(FieldError::invalid(&at("activeDeadlineSeconds"), v, "must be greater than or equal to 0"));
    }
    match spec.completion_mode.as_deref() {
        None | Some("NonIndexed") => {}
        Some("Indexed") if spec.completions.is_none() => {
            errs.push(FieldError::required_why(&at("completions"), "when completion mode is Indexed"))
        }
        Some("Indexed") => {}
        Some(other) => errs.push(FieldError::unsupported(&at("completionMode"), other, &["NonIndexed", "Indexed"])),
    }
}

/// `validateJobSpec`'s pod template: a valid pod spec that does not restart always.
fn validate_job_template(spec: &JobSpec, path: &str, errs: &mut Vec<FieldError>) {
    validate_pod_spec(&spec.template.spec, &format!("{path}.template.spec"), errs);
    // The pod spec's default turns an unset policy into Always, so both mean "not set here".
    let field = format!("{path}.template.spec.restartPolicy");
    match spec.template.spec.restart_policy.as_deref() {
        None | Some("Always") | Some("") => errs.push(FieldError::required_why(&field, "valid values: \"OnFailure\", \"Never\"")),
        Some("OnFailure") | Some("Never") => {}
        Some(other) => errs.push(FieldError::unsupported(&field, other, &["OnFailure", "Never"])),
    }
}

fn validate_selector(job: &Job, errs: &mut Vec<FieldError>) {
    let Some(selector) = &job.spec.selector else {
        errs.push(FieldError::required("spec.selector"));
        return;
    };
    let template_labels = &job.spec.template.metadata.labels;
    if selector.is_empty() {
        errs.push(FieldError::required("spec.selector"));
    } else if !selector.matches(template_labels) {
        errs.push(FieldError::invalid(
            "spec.template.metadata.labels",
            go_map_literal(template_labels),
            "`selector` does not match template `labels`",
        ));
    }
    if job.spec.manual_selector == Some(true) || job.metadata.uid.is_empty() {
        return;
    }
    // A generated selector must select this Job's UID, whatever else the user wrote into it.
    let expected: StringMap = [(CONTROLLER_UID_LABEL.to_string(), job.metadata.uid.to_string())].into();
    if !selector.matches(&expected) {
        let sel = crate::command::printers::selector_string(selector);
        errs.push(FieldError::invalid("spec.selector", format!("{{{sel}}}"), "`selector` not auto-generated"));
    }
}

/// `ValidateJobSpecUpdate`: what a running Job keeps. (Upstream also lets a suspended Job that
/// never started change its template's scheduling directives, and an Indexed Job scale
/// completions with parallelism; neither is modelled, so both stay immutable here.)
pub fn immutable_errors(old: &Job, new: &Job) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if old.spec.selector != new.spec.selector {
        let sel = new.spec.selector.as_ref().map(crate::command::printers::selector_string).unwrap_or_default();
        errs.push(FieldError::invalid("spec.selector", format!("{{{sel}}}"), "field is immutable"));
    }
    if old.spec.template != new.spec.template {
        errs.push(FieldError::invalid("spec.template", "core.PodTemplateSpec{...}", "field is immutable"));
    }
    if old.spec.completions != new.spec.completions {
        errs.push(FieldError::invalid("spec.completions", new.spec.completions.unwrap_or(0), "field is immutable"));
    }
    if old.spec.completion_mode != new.spec.completion_mode {
        errs.push(FieldError::invalid(
            "spec.completionMode",
            format!("{:?}", new.spec.completion_mode.clone().unwrap_or_default()),
            "field is immutable",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(completions: Option<i32>, parallelism: Option<i32>) -> Job {
        let mut j = Job::default();
        j.metadata.name = "pi".into();
        j.metadata.uid = "u-1".into();
        j.spec.completions = completions;
        j.spec.parallelism = parallelism;
        j
    }

    #[test]
    fn defaults_follow_set_defaults_job() {
        let cases = [((None, None), (Some(1), Some(1))), ((Some(5), None), (Some(5), Some(1))), ((None, Some(3)), (None, Some(3)))];
        for ((c, p), want) in cases {
            let mut j = job(c, p);
            default_job(&mut j);
            assert_eq!((j.spec.completions, j.spec.parallelism), want, "completions {c:?}, parallelism {p:?}");
            assert_eq!(
                (j.spec.backoff_limit, j.spec.completion_mode.as_deref(), j.spec.suspend),
                (Some(6), Some("NonIndexed"), Some(false))
            );
        }
    }

    #[test]
    fn the_generated_selector_is_the_uid_and_the_template_carries_four_labels() {
        let mut j = job(None, None);
        j.spec.template.spec.restart_policy = Some("Never".into());
        prepare_for_create(&mut j);
        let sel = j.spec.selector.as_ref().unwrap();
        assert_eq!(sel.match_labels, [(CONTROLLER_UID_LABEL.to_string(), "u-1".to_string())].into());
        let labels: Vec<(&str, &str)> = j.spec.template.metadata.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            labels,
            [(CONTROLLER_UID_LABEL, "u-1"), (JOB_NAME_LABEL, "pi"), (LEGACY_CONTROLLER_UID_LABEL, "u-1"), (LEGACY_JOB_NAME_LABEL, "pi")]
        );
        assert_eq!(j.metadata.labels, j.spec.template.metadata.labels, "the Job takes its template's labels");
    }

    #[test]
    fn a_template_that_would_restart_always_is_refused_with_the_apiservers_words() {
        let mut j = job(None, None);
        j.spec.template.spec.containers = vec![Container { name: "c".into(), image: "busybox".into(), ..Default::default() }].into();
        j.spec.template.spec.restart_policy = Some("Always".into());
        prepare_for_create(&mut j);
        let mut errs = Vec::new();
        validate_job(&j, &mut errs);
        let text: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(text, ["spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""]);
    }
}
