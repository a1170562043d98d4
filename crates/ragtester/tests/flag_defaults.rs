//! A flag left out means what the project file means when it leaves the setting out: the defaults `--help`
//! shows are the project file's.

use ragtester_core::config::{GenerationSettings, JudgeSettings, RunSettings};
use std::process::Command;

/// `--help` of a command: each flag with the default clap shows for it.
fn defaults(command: &str) -> Vec<(String, String)> {
    let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args([command, "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let mut flag = String::new();
    let mut found = Vec::new();
    for line in help.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("--") {
            flag = rest.split([' ', '=']).next().unwrap().to_string();
        }
        if let Some((_, default)) = line.rsplit_once("[default: ") {
            found.push((flag.clone(), default.trim_end_matches(']').to_string()));
        }
    }
    found
}

fn default_of(found: &[(String, String)], flag: &str) -> String {
    let hit = found.iter().find(|(f, _)| f == flag);
    hit.unwrap_or_else(|| panic!("--{flag} shows no default in {found:?}"))
        .1
        .clone()
}

#[test]
fn flag_defaults_are_the_project_files() {
    let generate = defaults("generate");
    let settings = GenerationSettings::default();
    assert_eq!(default_of(&generate, "n-test"), settings.n_test.to_string());
    assert_eq!(default_of(&generate, "llm"), settings.llm);
    let tokens = settings.section_tokens.to_string();
    assert_eq!(default_of(&generate, "section-tokens"), tokens);
    assert_eq!(default_of(&generate, "seed"), settings.seed.to_string());
    assert_eq!(default_of(&generate, "strategy"), "ragtester baseline");
    let concurrency = RunSettings::default().concurrency.to_string();
    assert_eq!(default_of(&generate, "concurrency"), concurrency);
    let judge = defaults("judge");
    let settings = JudgeSettings::default();
    assert_eq!(default_of(&judge, "judge"), settings.judges.join(" "));
    assert_eq!(default_of(&judge, "samples"), settings.samples.to_string());
    assert_eq!(default_of(&judge, "panel"), settings.panel);
    assert_eq!(default_of(&judge, "claims"), settings.claims);
}

#[test]
fn the_long_version_names_the_licences() {
    let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args(["--version", "--verbose"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let version = format!("ragtester {}", env!("CARGO_PKG_VERSION"));
    assert!(text.starts_with(&version), "{text}");
    for expected in [
        "licence: MIT",
        "Apache-2.0",
        "OFL-1.1",
        "model weights in this binary",
    ] {
        assert!(text.contains(expected), "{expected} missing from:\n{text}");
    }
    // Short forms, either order; a plain --version is clap's one line.
    let long = Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args(["-v", "-V"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(long.stdout).unwrap(), text);
    let short = Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(short.stdout).unwrap().trim(), version);
}
