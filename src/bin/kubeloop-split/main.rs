//! kubeloop-split: the page's wasm in two parts, so that a visitor on a slow link waits only for
//! the part that draws and runs the first picture (issue 14: `data-ready` on Slow 4G).
//!
//! Run by Trunk after every page build (Trunk.toml's post_build hook) on the staged directory:
//! it splits `kubeloop-web_bg.wasm` into a primary module (same name) and
//! `kubeloop-web_lazy.wasm` by the keep list `www/split-keep.txt` (the functions the page runs as
//! it comes alive, recorded by `scripts/split-profile.mjs`), and patches `kubeloop-web.js` to fetch
//! the lazy part once the app has started. It also leaves, under `target/split/`, the unsplit input
//! (wasm and glue) and the name of each lazy slot, which the profile script uses to record a new keep list.
//!
//! Usage: `kubeloop-split [--keep FILE | --keep-none] [DIR]` (DIR defaults to
//! `$TRUNK_STAGING_DIR`). `--keep-none` splits every function it can and routes the lazy module's own calls through
//! the stubs, so that each call can be recorded: the profile script's build, never shipped.

mod glue;
mod integrity;
mod split;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const WASM: &str = "kubeloop-web_bg.wasm";
const LAZY: &str = "kubeloop-web_lazy.wasm";
const GLUE: &str = "kubeloop-web.js";
const KEEP: &str = "www/split-keep.txt";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("kubeloop-split: {error}");
            ExitCode::FAILURE
        }
    }
}

struct Options {
    keep: Option<PathBuf>,
    dir: PathBuf,
}

fn options(args: Vec<String>) -> Result<Options, String> {
    let mut keep = Some(PathBuf::from(KEEP));
    let mut dir = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--keep" => keep = Some(args.next().ok_or("--keep needs a file")?.into()),
            "--keep-none" => keep = None,
            flag if flag.starts_with('-') => return Err(format!("unknown flag {flag}")),
            path => dir = Some(PathBuf::from(path)),
        }
    }
    let dir = match dir {
        Some(dir) => dir,
        None => std::env::var_os("TRUNK_STAGING_DIR").ok_or("give the directory, or set TRUNK_STAGING_DIR")?.into(),
    };
    Ok(Options { keep, dir })
}

fn run(args: Vec<String>) -> Result<String, String> {
    let options = options(args)?;
    let wasm = read(&options.dir.join(WASM))?;
    let glue = String::from_utf8(read(&options.dir.join(GLUE))?).map_err(|_| format!("{GLUE} is not UTF-8"))?;
    let keep: HashSet<String> = match &options.keep {
        Some(path) => keep_list(&String::from_utf8_lossy(&read(path)?)),
        None => HashSet::new(),
    };
    let calls = if options.keep.is_some() { split::Calls::Direct } else { split::Calls::ThroughStubs };
    let split = split::split(&wasm, &|name| keep.contains(name), calls)?;
    let original_glue = glue;
    let glue = glue::patch(&original_glue)?;

    let work = work_dir();
    std::fs::create_dir_all(&work).map_err(|error| format!("cannot create {}: {error}", work.display()))?;
    write(&work.join("input.wasm"), &wasm)?;
    write(&work.join("input.js"), original_glue.as_bytes())?;
    write(&work.join("lazy-names.txt"), split.lazy_names.join("\n").as_bytes())?;
    write(&options.dir.join(WASM), &split.primary)?;
    write(&options.dir.join(LAZY), &split.lazy)?;
    write(&options.dir.join(GLUE), glue.as_bytes())?;
    let index = options.dir.join("index.html");
    if index.exists() {
        let html = String::from_utf8(read(&index)?).map_err(|_| "index.html is not UTF-8".to_string())?;
        let html = integrity::update(&html, GLUE, glue.as_bytes());
        write(&index, integrity::update(&html, WASM, &split.primary).as_bytes())?;
    }
    Ok(format!(
        "kubeloop-split: {} functions kept, {} lazy; {WASM} {} KB, {LAZY} {} KB (was {} KB)",
        split.kept,
        split.lazy_names.len(),
        split.primary.len() / 1024,
        split.lazy.len() / 1024,
        wasm.len() / 1024
    ))
}

/// The names in a keep list: one per line; blank lines and `#` comments are skipped.
fn keep_list(text: &str) -> HashSet<String> {
    text.lines().map(str::trim_end).filter(|line| !line.is_empty() && !line.starts_with('#')).map(String::from).collect()
}

/// Where the profile script finds the unsplit input and the slots' names.
fn work_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("target"));
    target.join("split")
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|error| format!("cannot read {}: {error}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|error| format!("cannot write {}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keep_list_skips_comments_and_blank_lines() {
        let keep = keep_list("# recorded\n\n<a as b>::c\nd\n");
        assert_eq!(keep.len(), 2);
        assert!(keep.contains("<a as b>::c") && keep.contains("d"));
    }

    #[test]
    fn options_take_a_directory_and_refuse_unknown_flags() {
        let parsed = options(vec!["--keep-none".into(), "dist".into()]).unwrap();
        assert_eq!((parsed.keep, parsed.dir), (None, PathBuf::from("dist")));
        assert!(options(vec!["--fast".into(), "dist".into()]).is_err());
    }
}
