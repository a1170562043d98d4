//! Prompt templates in English and Chinese, as the stages that prompt models keep them (the judge, the
//! question writer, the document writer): minijinja text with a `---user---` line between the system and
//! user messages, built in or read from a user's folder (`NAME.en.j2` / `NAME.zh.j2`), checked when loaded,
//! and versioned so records say which prompt produced them.

use crate::chat::Message;
use anyhow::{Result, anyhow, bail};
use serde::Serialize;
use std::path::Path;

pub const SEPARATOR: &str = "---user---";

#[derive(Debug, Clone)]
pub struct PromptTemplates {
    name: &'static str,
    en: String,
    zh: String,
    /// The built-in version (`judge-v4`), or `custom-` and a hash of the user's templates.
    pub version: String,
}

impl PromptTemplates {
    pub fn builtin(name: &'static str, en: &str, zh: &str, version: &str) -> Self {
        Self {
            name,
            en: en.into(),
            zh: zh.into(),
            version: version.into(),
        }
    }

    /// Replace the built-in templates with `NAME.en.j2` and/or `NAME.zh.j2` from `dir` (the built-in one for
    /// a missing file). Each is rendered once with `sample`, so a broken template fails before any model
    /// is called.
    pub fn override_from(mut self, dir: &Path, sample: &impl Serialize) -> Result<Self> {
        let mut found: Vec<(std::path::PathBuf, &str)> = Vec::new();
        for (lang, slot) in [("en", &mut self.en), ("zh", &mut self.zh)] {
            let path = dir.join(format!("{}.{lang}.j2", self.name));
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    *slot = text;
                    found.push((path, lang));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => bail!("cannot read {}: {e}", path.display()),
            }
        }
        if found.is_empty() {
            bail!(
                "{} holds neither {n}.en.j2 nor {n}.zh.j2",
                dir.display(),
                n = self.name
            );
        }
        self.version = format!(
            "custom-{}",
            &crate::ids::stable_id(self.name, &(&self.en, &self.zh))[..12]
        );
        // Each file found is checked with its own text (a folder may hold the Chinese template alone).
        for (path, lang) in &found {
            let text = if *lang == "zh" { &self.zh } else { &self.en };
            render(text, sample).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        }
        Ok(self)
    }

    /// The system and user messages for `language` (`zh` or anything else for English).
    pub fn messages(&self, language: &str, values: &impl Serialize) -> Result<Vec<Message>> {
        let template = if language == "zh" { &self.zh } else { &self.en };
        render(template, values)
            .map_err(|e| anyhow!("the {} prompt failed to render: {e}", self.name))
    }
}

fn render(template: &str, values: &impl Serialize) -> Result<Vec<Message>, String> {
    let text = minijinja::Environment::new()
        .render_str(
            template,
            minijinja::Value::from(minijinja::value::Serde(values)),
        )
        .map_err(|e| format!("{e:#}"))?;
    let (system, user) = text
        .split_once(SEPARATOR)
        .ok_or_else(|| format!("the template has no `{SEPARATOR}` line between system and user"))?;
    Ok(vec![
        Message::system(system.trim()),
        Message::user(user.trim_start_matches('\n')),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct V {
        x: &'static str,
    }

    #[test]
    fn a_folder_with_one_broken_template_is_refused_whichever_language_it_is() {
        let base = PromptTemplates::builtin(
            "t",
            "A {{ x }}\n---user---\nB",
            "甲 {{ x }}\n---user---\n乙",
            "t-v1",
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.zh.j2"), "{{ oops(").unwrap();
        let err = base
            .clone()
            .override_from(dir.path(), &V { x: "1" })
            .unwrap_err();
        assert!(err.to_string().contains("t.zh.j2"), "{err}");
        std::fs::write(dir.path().join("t.zh.j2"), "中 {{ x }}\n---user---\n文").unwrap();
        let custom = base.override_from(dir.path(), &V { x: "1" }).unwrap();
        assert!(custom.version.starts_with("custom-"));
        assert_eq!(
            custom.messages("zh", &V { x: "2" }).unwrap()[0].content,
            "中 2"
        );
        assert_eq!(
            custom.messages("en", &V { x: "2" }).unwrap()[0].content,
            "A 2"
        );
    }
}
