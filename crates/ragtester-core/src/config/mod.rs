//! One cell of the configuration matrix (`cell.rs`), the user's own services as matrix rows (`target.rs`),
//! the TOML project file that declares corpus, generation, matrix, judge and run settings (`project.rs`),
//! and model prices (`prices.rs`).

mod cell;
mod prices;
mod project;
mod target;

pub use cell::*;
pub use prices::*;
pub use project::*;
pub use target::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_id_is_stable_and_setting_sensitive() {
        let a = Configuration::new(
            "offline".into(),
            "hash".into(),
            RetrieverKind::Hybrid,
            5,
            ChunkingSettings::default(),
            Fusion::default(),
        );
        let b = Configuration::new(
            "offline".into(),
            "hash".into(),
            RetrieverKind::Hybrid,
            5,
            ChunkingSettings::default(),
            Fusion::default(),
        );
        assert_eq!(a.id, b.id);
        assert_eq!(a.id, a.compute_id());
        let c = Configuration::new(
            "offline".into(),
            "hash".into(),
            RetrieverKind::Hybrid,
            6,
            ChunkingSettings::default(),
            Fusion::default(),
        );
        assert_ne!(a.id, c.id);
    }

    #[test]
    fn matrix_expands_and_bm25_ignores_embedders() {
        let m = MatrixSettings {
            embedder: vec!["hash".into(), "local:x".into()],
            retriever: vec![RetrieverKind::Bm25, RetrieverKind::Dense],
            top_k: vec![3, 5],
            ..Default::default()
        };
        let configs = m.expand().unwrap();
        // bm25: 2 top-k; dense: 2 embedders × 2 top-k.
        assert_eq!(configs.len(), 6);
    }

    #[test]
    fn unknown_keys_are_rejected_with_the_file_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[matrix]\nretriever = [\"bm25\"]\ncolour = 1\n").unwrap();
        let err = format!("{:#}", ProjectConfig::load(&path).unwrap_err());
        assert!(err.contains("c.toml") && err.contains("colour"), "{err}");
    }

    #[test]
    fn targets_become_configurations_and_are_validated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(
            &path,
            "[[target]]\nname = \"svc\"\ntype = \"http\"\nurl = \"http://127.0.0.1:9/q\"\nbody = '{\"q\": \"{{query}}\"}'\nanswer_pointer = \"/answer\"\n",
        )
        .unwrap();
        let config = ProjectConfig::load(&path).unwrap();
        let configs = config.configurations().unwrap();
        assert_eq!(configs.len(), 1);
        assert_eq!(configs[0].retriever, RetrieverKind::External);
        assert_eq!(configs[0].label(), "target svc (http)");
        std::fs::write(
            &path,
            "[[target]]\nname = \"c\"\ntype = \"command\"\nanswer_pointer = \"answer\"\n",
        )
        .unwrap();
        let err = format!("{:#}", ProjectConfig::load(&path).unwrap_err());
        assert!(err.contains("needs `command"), "{err}");
    }

    #[test]
    fn a_project_updates_its_suite_and_repeats_its_cells() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(
            &path,
            "[generation]\nupdate = \"suites/v1.jsonl\"\n[run]\nrepeat = 3\n[matrix]\nretriever = [\"bm25\"]\ntop_k = [3]\n",
        )
        .unwrap();
        let config = ProjectConfig::load(&path).unwrap();
        // The earlier suite is found beside the project file, as its documents are.
        assert_eq!(
            config.generation.update,
            Some(dir.path().join("suites/v1.jsonl"))
        );
        let configs = config.configurations().unwrap();
        assert_eq!(configs.len(), 3);
        let base = configs[0].base_id();
        assert!(configs.iter().all(|c| c.base_id() == base && c.id != base));
        assert_eq!(
            configs[1].label(),
            format!("{} · repeat 2/3", configs[1].base_label())
        );
        // Repeats ask afresh: answers replayed from the cache are refused beside them.
        std::fs::write(&path, "[run]\nrepeat = 2\nreplay_answers = true\n").unwrap();
        let err = format!("{:#}", ProjectConfig::load(&path).unwrap_err());
        assert!(err.contains("replay_answers"), "{err}");
        std::fs::write(&path, "[run]\nrepeat = 0\n").unwrap();
        assert!(ProjectConfig::load(&path).is_err());
    }

    #[test]
    fn prices_cost_tokens() {
        let p = Price {
            input_per_million: 0.15,
            output_per_million: 0.6,
        };
        // 2M prompt tokens and 0.5M reply tokens: 0.30 + 0.30.
        assert!((p.cost(2_000_000, 500_000) - 0.6).abs() < 1e-12);
    }

    #[test]
    fn zero_top_k_is_invalid() {
        let m = MatrixSettings {
            top_k: vec![0],
            ..Default::default()
        };
        assert!(m.expand().is_err());
    }
}
