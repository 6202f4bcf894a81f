//! What kube-apiserver does with a CronJob before it stores it: `SetDefaults_CronJob` and
//! `ValidateCronJob`'s messages (the schedule through robfig/cron's parser, the time zone, the
//! concurrency policy, the history limits and the Job template). The CronJob controller trusts
//! all of it: a stored CronJob's schedule parses and its time zone is one kubeloop simulates.

use super::errors::FieldError;
use crate::model::cron::{self, Zone};
use crate::model::*;

/// `SetDefaults_CronJob`: Allow, not suspended, three successful Jobs and one failed kept.
pub fn default_cron_job(cj: &mut CronJob) {
    let spec = &mut cj.spec;
    if spec.concurrency_policy.is_empty() {
        spec.concurrency_policy = "Allow".into();
    }
    spec.suspend.get_or_insert(false);
    spec.successful_jobs_history_limit.get_or_insert(3);
    spec.failed_jobs_history_limit.get_or_insert(1);
    super::defaults::default_template(&mut spec.job_template.spec.template);
}

/// `validateCronJobSpec`.
pub fn validate_cron_job(cj: &CronJob, errs: &mut Vec<FieldError>) {
    let spec = &cj.spec;
    validate_schedule(&spec.schedule, errs);
    if let Some(v) = spec.starting_deadline_seconds.filter(|v| *v < 0) {
        errs.push(FieldError::invalid("spec.startingDeadlineSeconds", v, "must be greater than or equal to 0"));
    }
    if let Some(tz) = &spec.time_zone {
        match cron::zone(tz) {
            Zone::Fixed(_) => {}
            Zone::Invalid(why) => errs.push(FieldError::invalid("spec.timeZone", format!("{tz:?}"), &why)),
            Zone::Unmodelled => errs.push(FieldError::invalid("spec.timeZone", format!("{tz:?}"), cron::UNMODELLED_ZONE)),
        }
    }
    match spec.concurrency_policy.as_str() {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.push(FieldError::required("spec.concurrencyPolicy")),
        other => errs.push(FieldError::unsupported("spec.concurrencyPolicy", other, &["Allow", "Forbid", "Replace"])),
    }
    super::job::validate_job_template_spec(&spec.job_template, errs);
    for (field, value) in [
        ("spec.successfulJobsHistoryLimit", spec.successful_jobs_history_limit),
        ("spec.failedJobsHistoryLimit", spec.failed_jobs_history_limit),
    ] {
        if let Some(v) = value.filter(|v| *v < 0) {
            errs.push(FieldError::invalid(field, v, "must be greater than or equal to 0"));
        }
    }
}

/// `validateScheduleFormat`: robfig's parse error, and no `TZ=` inside the schedule.
fn validate_schedule(schedule: &str, errs: &mut Vec<FieldError>) {
    if schedule.is_empty() {
        errs.push(FieldError::required("spec.schedule"));
        return;
    }
    if let Err(why) = cron::parse_standard(schedule) {
        errs.push(FieldError::invalid("spec.schedule", format!("{schedule:?}"), &why));
    }
    if schedule.contains("TZ") {
        errs.push(FieldError::invalid(
            "spec.schedule",
            format!("{schedule:?}"),
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ));
    }
}

/// `ValidateCronJobCreate`'s name limit: the controller appends an 11-character suffix
/// (`-<minutes since the epoch>`) to make each Job's name, which must stay within 63.
pub fn validate_create(cj: &CronJob) -> Option<FieldError> {
    let name = &cj.metadata.name;
    (name.len() > 52).then(|| FieldError::invalid("metadata.name", format!("{name:?}"), "must be no more than 52 characters"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_for(schedule: &str, tz: Option<&str>) -> Vec<String> {
        let mut cj = CronJob::default();
        cj.spec.schedule = schedule.into();
        cj.spec.time_zone = tz.map(Into::into);
        cj.spec.job_template.spec.template.spec.containers =
            vec![Container { name: "c".into(), image: "busybox".into(), ..Default::default() }].into();
        cj.spec.job_template.spec.template.spec.restart_policy = Some("OnFailure".into());
        default_cron_job(&mut cj);
        let mut errs = Vec::new();
        validate_cron_job(&cj, &mut errs);
        errs.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn defaults_are_allow_unsuspended_three_and_one() {
        let mut cj = CronJob::default();
        default_cron_job(&mut cj);
        let s = &cj.spec;
        assert_eq!(
            (s.concurrency_policy.as_str(), s.suspend, s.successful_jobs_history_limit, s.failed_jobs_history_limit),
            ("Allow", Some(false), Some(3), Some(1))
        );
    }

    #[test]
    fn schedules_and_zones_are_refused_in_the_apiservers_words() {
        assert!(errors_for("*/1 * * * *", None).is_empty());
        assert!(errors_for("@hourly", Some("Etc/UTC")).is_empty());
        assert_eq!(
            errors_for("61 * * * *", None),
            ["spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61"]
        );
        assert_eq!(
            errors_for("TZ=UTC * * * * *", None),
            ["spec.schedule: Invalid value: \"TZ=UTC * * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"]
        );
        assert_eq!(errors_for("* * * * *", Some("Local")), ["spec.timeZone: Invalid value: \"Local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"]);
        assert_eq!(
            errors_for("* * * * *", Some("Europe/Paris")),
            [format!("spec.timeZone: Invalid value: \"Europe/Paris\": {}", cron::UNMODELLED_ZONE)]
        );
    }
}
